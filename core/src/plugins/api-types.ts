/**
 * The plugins' API shapes that the relay's plugin listing (relay/definitions/plugin.ts) and the web client share, as
 * types only: this module imports nothing. Keep the names stable; add, do not rename.
 */

/**
 * The JSON Schema keywords a client reads of a plugin's config or tracker schema to draw its form (the plugin may use
 * others, which pass through unread), with the two Herald adds: `x-secret` on a secret field, and `x-option-labels`
 * (an enum field's values labelled in the caller's language).
 */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  default?: unknown;
  description?: string;
  title?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  patternProperties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  'x-secret'?: boolean;
  /** Labels of an enum field's values in the interface language, keyed by the value as a string. */
  'x-option-labels'?: Record<string, string>;
}
