/** Typed form helpers: a select's string narrowed to its union without a cast. */

/** `value` when it is one of `values` (a select's options), else undefined: narrows a string to the union. */
export function oneOf<T extends string>(values: readonly T[], value: string): T | undefined {
  return values.find((v) => v === value);
}
