/**
 * Typed forms: one state object shaped like the server's create or change body (`useForm<Body>`), with
 * binders that give an <input>, <textarea>, <select> or checkbox its value and handler with the field's
 * own type, so a form builds its body without a cast or a field-by-field copy. A select's string is
 * narrowed to its union by `oneOf` (the options it offers).
 */
import type { TargetedEvent } from 'preact';
import { useCallback, useState } from 'preact/hooks';

/** `value` when it is one of `values` (a select's options), else undefined: narrows a string to the union. */
export function oneOf<T extends string>(values: readonly T[], value: string): T | undefined {
  return values.find((v) => v === value);
}

/** The keys of `T` whose values are of type `V` (exactly: a `string | null` key is not a `string` key). */
type KeysOf<T, V> = { [K in keyof T]-?: [T[K]] extends [V] ? ([V] extends [T[K]] ? K : never) : never }[keyof T] &
  string;

/** The keys of `T` whose values are strings or a union of them (`'en' | 'ru'`). */
type ChoiceKeys<T> = { [K in keyof T]-?: T[K] extends string ? K : never }[keyof T] & string;

type Typed = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;

export interface Form<T> {
  values: T;
  /** One field's new value. */
  set: <K extends keyof T>(key: K, value: T[K]) => void;
  /** Several fields at once (what a choice implies for the others). */
  merge: (changes: Partial<T>) => void;
  /** A text field (<input>, <textarea>). */
  text: (key: KeysOf<T, string>) => { value: string; onInput: (e: TargetedEvent<Typed>) => void };
  /** An optional text field: empty (or blank) is null. */
  optionalText: (key: KeysOf<T, string | null>) => { value: string; onInput: (e: TargetedEvent<Typed>) => void };
  /** A number field (<input type="number">); what is not a number is left as it was. */
  number: (key: KeysOf<T, number>) => { value: string; onInput: (e: TargetedEvent<HTMLInputElement>) => void };
  /** An optional number field: empty is null (the service's default). */
  optionalNumber: (key: KeysOf<T, number | null>) => {
    value: string;
    onInput: (e: TargetedEvent<HTMLInputElement>) => void;
  };
  /** A checkbox. */
  check: (key: KeysOf<T, boolean>) => { checked: boolean; onChange: (e: TargetedEvent<HTMLInputElement>) => void };
  /** A <select> (or radio group) of the union's values; a value outside them is ignored. */
  choice: <K extends ChoiceKeys<T>>(
    key: K,
    options: readonly T[K][],
  ) => { value: string; onChange: (e: TargetedEvent<HTMLSelectElement | HTMLInputElement>) => void };
}

/** A form's state, typed by the body it sends (the server's create or change body). */
export function useForm<T extends object>(initial: T | (() => T)): Form<T> {
  const [values, setValues] = useState<T>(initial);
  const set = useCallback(<K extends keyof T>(key: K, value: T[K]) => setValues((v) => ({ ...v, [key]: value })), []);
  const merge = useCallback((changes: Partial<T>) => setValues((v) => ({ ...v, ...changes })), []);
  // Each binder stores what its field's type says, read from the element the handler sits on.
  const text = (key: KeysOf<T, string>) => ({
    value: String(values[key]),
    onInput: (e: TargetedEvent<Typed>) => setValues((v) => ({ ...v, [key]: e.currentTarget.value })),
  });
  const optionalText = (key: KeysOf<T, string | null>) => ({
    value: String(values[key] ?? ''),
    onInput: (e: TargetedEvent<Typed>) => {
      const raw = e.currentTarget.value;
      setValues((v) => ({ ...v, [key]: raw.trim() ? raw : null }));
    },
  });
  const number = (key: KeysOf<T, number>) => ({
    value: String(values[key]),
    onInput: (e: TargetedEvent<HTMLInputElement>) => {
      const n = e.currentTarget.valueAsNumber;
      if (Number.isFinite(n)) setValues((v) => ({ ...v, [key]: n }));
    },
  });
  const optionalNumber = (key: KeysOf<T, number | null>) => ({
    value: values[key] === null ? '' : String(values[key]),
    onInput: (e: TargetedEvent<HTMLInputElement>) => {
      const { value, valueAsNumber } = e.currentTarget;
      if (value.trim() === '') setValues((v) => ({ ...v, [key]: null }));
      else if (Number.isFinite(valueAsNumber)) setValues((v) => ({ ...v, [key]: valueAsNumber }));
    },
  });
  const check = (key: KeysOf<T, boolean>) => ({
    checked: Boolean(values[key]),
    onChange: (e: TargetedEvent<HTMLInputElement>) => setValues((v) => ({ ...v, [key]: e.currentTarget.checked })),
  });
  const choice = <K extends ChoiceKeys<T>>(key: K, options: readonly T[K][]) => ({
    value: String(values[key]),
    onChange: (e: TargetedEvent<HTMLSelectElement | HTMLInputElement>) => {
      const picked = options.find((o) => o === e.currentTarget.value);
      if (picked !== undefined) setValues((v) => ({ ...v, [key]: picked }));
    },
  });
  return { values, set, merge, text, optionalText, number, optionalNumber, check, choice };
}
