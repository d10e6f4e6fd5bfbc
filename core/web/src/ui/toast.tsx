/** Short confirmations and errors in a polite live region. */
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../lib/api.ts';
import { t } from '../lib/i18n.ts';

interface Toast { id: number; text: string; tone: 'ok' | 'danger' }
let items: Toast[] = [];
let seq = 0;
const listeners = new Set<(v: Toast[]) => void>();

function push(text: string, tone: Toast['tone']): void {
  const item = { id: ++seq, text, tone };
  items = [...items, item].slice(-4);
  listeners.forEach((fn) => fn(items));
  setTimeout(() => { items = items.filter((i) => i.id !== item.id); listeners.forEach((fn) => fn(items)); }, tone === 'danger' ? 8000 : 3500);
}

/** The readable sentence for an error: the service's `detail`, or a translated fallback. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 0) return t('errors.network');
    return err.message || t('errors.generic');
  }
  return t('errors.generic');
}

export const toast = {
  ok: (text: string) => push(text, 'ok'),
  error: (err: unknown) => push(errorText(err), 'danger'),
};

export function Toasts() {
  const [list, setList] = useState(items);
  useEffect(() => { listeners.add(setList); return () => { listeners.delete(setList); }; }, []);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {list.map((i) => <div key={i.id} class={`toast toast-${i.tone}`}>{i.text}</div>)}
    </div>
  );
}
