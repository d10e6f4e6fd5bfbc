import Type, { type TOptional, type TSchema } from 'typebox';

/**
 * Each of the properties, optional: a change body from a resource's fields (`Type.Partial` would drop
 * the object's `additionalProperties: false`, so bodies spread this into `Type.Object` instead).
 */
export function optional<P extends Record<string, TSchema>>(props: P): { [K in keyof P]: TOptional<P[K]> } {
  return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, Type.Optional(v)])) as {
    [K in keyof P]: TOptional<P[K]>;
  };
}
