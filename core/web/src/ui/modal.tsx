/** A modal form in a native <dialog>: focus is trapped by the browser, Escape closes it. */
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import { t } from '../lib/i18n.ts';
import { Icon } from './icons.tsx';

export function Modal({
  title,
  onClose,
  children,
  wide,
}: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    const d = ref.current!;
    if (!d.open) d.showModal();
    const onCancel = (e: Event) => {
      e.preventDefault();
      close.current();
    };
    d.addEventListener('cancel', onCancel);
    return () => {
      d.removeEventListener('cancel', onCancel);
      if (d.open) d.close();
    };
  }, []);
  return (
    <dialog ref={ref} class={`modal${wide ? ' modal-wide' : ''}`} aria-labelledby={id}>
      <div class="modal-head">
        <h2 id={id}>{title}</h2>
        <button type="button" class="icon-btn" aria-label={t('common.close')} onClick={onClose}>
          <Icon name="close" />
        </button>
      </div>
      <div class="modal-body">{children}</div>
    </dialog>
  );
}
