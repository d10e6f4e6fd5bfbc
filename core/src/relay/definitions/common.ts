/**
 * Pieces every resource definition shares: making each setting optional (a change body, or a
 * backup written before a setting existed), the time and id fields of a view, and the outbound
 * allow list's view of a provider or target.
 */
import Type, { type TOptional, type TSchema } from 'typebox';

/** Each of the properties, optional. */
export function optional<P extends Record<string, TSchema>>(props: P): { [K in keyof P]: TOptional<P[K]> } {
  return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, Type.Optional(v)])) as {
    [K in keyof P]: TOptional<P[K]>;
  };
}

/** The given properties of `props`, each optional: a backup record's settings added after its format was fixed. */
export function addedLater<P extends Record<string, TSchema>, K extends keyof P & string>(
  props: P,
  keys: readonly K[],
): { [Q in Exclude<keyof P, K>]: P[Q] } & { [Q in K]: TOptional<P[Q]> } {
  const later = Object.fromEntries(keys.map((k) => [k, Type.Optional(props[k] as TSchema)]));
  return { ...props, ...later } as never;
}

/** A nullable value: `X` or `null`. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** Open JSON objects: plugin configs, payloads, JSON Schemas. */
export const JsonObject = Type.Record(Type.String(), Type.Unknown());

/** A stored time, as the API answers it (ISO 8601). */
export const Time = Type.String({ format: 'date-time' });

/** An entry of an outbound allow list wider than any private network, with a sentence saying what it opens. */
export const WideAllowEntryView = Type.Object({
  entry: Type.String(),
  code: Type.Literal('outbound_allow_too_wide'),
  message: Type.String(),
});

/** A provider's or target's outbound allow list as the API shows it, and its too-wide entries. */
export const OutboundAllowView = {
  outbound_allow: Type.Array(Type.String()),
  outbound_allow_warnings: Type.Array(WideAllowEntryView),
};
