/**
 * A labelled form control with hints: the label names the control, the hints describe it
 * (aria-describedby), so screen readers announce the name without the whole help text.
 */
import { cloneElement, type ComponentChildren, type VNode } from 'preact';
import { useId } from 'preact/hooks';

export interface Hint { text: ComponentChildren; danger?: boolean }

export function Field({ label, hints = [], children, class: cls = '' }: { label: ComponentChildren; hints?: (Hint | string | false | null | undefined)[]; children: VNode<any>; class?: string }) {
  const id = useId();
  const shown = hints.filter(Boolean).map((h) => (typeof h === 'string' ? { text: h } : h as Hint));
  const ids = shown.map((_, i) => `${id}-h${i}`);
  return (
    <div class={`field ${cls}`}>
      <label class="field-label" for={id}>{label}</label>
      {cloneElement(children, { id, 'aria-describedby': ids.length ? ids.join(' ') : undefined })}
      {shown.map((h, i) => <small key={i} id={ids[i]} class={h.danger ? 'hint hint-danger' : 'hint'}>{h.text}</small>)}
    </div>
  );
}
