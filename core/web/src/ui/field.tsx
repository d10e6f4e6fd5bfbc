/**
 * A labelled form control with hints: the label names the control, the hints describe it
 * (aria-describedby; a text hint's inline Markdown is shown as code, bold or links), so screen
 * readers announce the name without the whole help text. An
 * `error` is shown first, marks the control invalid and is announced with it.
 */
import { type ComponentChildren, cloneElement, type VNode } from 'preact';
import { useId } from 'preact/hooks';
import { InlineMd } from './inline-md.tsx';

export interface Hint {
  text: ComponentChildren;
  danger?: boolean;
}

export function Field({
  label,
  hints = [],
  error,
  children,
  class: cls = '',
}: {
  label: ComponentChildren;
  hints?: (Hint | string | false | null | undefined)[];
  error?: string | null;
  children: VNode<any>;
  class?: string;
}) {
  const id = useId();
  // A text hint may quote code or a value in inline Markdown (`like this`): shown as code, not backticks.
  const shown = hints
    .filter(Boolean)
    .map((h) => (typeof h === 'string' ? { text: <InlineMd text={h} /> } : (h as Hint)));
  const ids = shown.map((_, i) => `${id}-h${i}`);
  const errorId = `${id}-err`;
  const described = [...(error ? [errorId] : []), ...ids];
  return (
    <div class={`field ${cls}${error ? ' field-invalid' : ''}`}>
      <label class="field-label" for={id}>
        {label}
      </label>
      {cloneElement(children, {
        id,
        'aria-describedby': described.length ? described.join(' ') : undefined,
        ...(error ? { 'aria-invalid': 'true' } : {}),
      })}
      {error && (
        <small id={errorId} class="hint hint-danger field-error" data-testid="field-error">
          {error}
        </small>
      )}
      {shown.map((h, i) => (
        <small key={i} id={ids[i]} class={h.danger ? 'hint hint-danger' : 'hint'}>
          {h.text}
        </small>
      ))}
    </div>
  );
}
