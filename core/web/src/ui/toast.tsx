/** Short confirmations and errors in a polite live region. */
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../lib/api.ts';
import { has, t, type Vars } from '../lib/i18n.ts';
import { pluginsNow } from '../lib/plugins.ts';
import { eventLabel, kindLabel } from './labels.ts';

interface Toast {
  id: number;
  text: string;
  tone: 'ok' | 'danger';
}
let items: Toast[] = [];
let seq = 0;
const listeners = new Set<(v: Toast[]) => void>();

function push(text: string, tone: Toast['tone']): void {
  const item = { id: ++seq, text, tone };
  items = [...items, item].slice(-4);
  listeners.forEach((fn) => fn(items));
  setTimeout(
    () => {
      items = items.filter((i) => i.id !== item.id);
      listeners.forEach((fn) => fn(items));
    },
    tone === 'danger' ? 8000 : 3500,
  );
}

/**
 * Problem params as message vars: lists joined, booleans as words the message does not show, event types and kinds by
 * name.
 */
export function problemVars(params: Record<string, unknown>): Vars {
  const vars: Vars = {};
  for (const [k, v] of Object.entries(params))
    vars[k] = Array.isArray(v)
      ? v.join(', ')
      : typeof v === 'number'
        ? v
        : k === 'event_type'
          ? eventLabel(String(v), pluginsNow())
          : k === 'kind'
            ? kindLabel(String(v), pluginsNow())
            : String(v);
  return vars;
}

/**
 * The readable sentence for an error, in the user's language: the client's own text for the
 * problem's stable `code` (`problem.<code>` in the locale files, filled with the problem's
 * params), else the service's `detail` (English), else a translated fallback.
 */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 0) return t('errors.network');
    if (has(`problem.${err.code}`)) return t(`problem.${err.code}`, problemVars(err.params));
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
  useEffect(() => {
    listeners.add(setList);
    return () => {
      listeners.delete(setList);
    };
  }, []);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {list.map((i) => (
        <div key={i.id} class={`toast toast-${i.tone}`}>
          {i.text}
        </div>
      ))}
    </div>
  );
}
