/**
 * The request body as data for the mapping: JSON, or an HTML-style form
 * (`application/x-www-form-urlencoded`, as Apprise's `form://` and many simple senders post) read
 * as a flat object of text fields.
 */

import type { InboundWebhook } from '@herald/plugin-api';
import { jsonBody } from '@herald/plugin-api';

const FORM = /^application\/x-www-form-urlencoded\s*(;|$)/i;

/** True when the Content-Type names a urlencoded form (parameters such as charset allowed). */
export function isForm(contentType: string | undefined): boolean {
  return FORM.test(contentType?.trim() ?? '');
}

/**
 * The fields of a urlencoded form: `{ name: value }`, every value a string (`+` and percent escapes
 * decoded as UTF-8). A name given more than once keeps its first value. The object has no
 * prototype, so a field named `__proto__` is an ordinary field, not a way to reach anything inherited.
 */
export function formFields(raw: Buffer): Record<string, string> {
  const fields: Record<string, string> = Object.create(null);
  for (const [name, value] of new URLSearchParams(raw.toString('utf8')))
    if (!Object.hasOwn(fields, name)) fields[name] = value;
  return fields;
}

/** A form's fields when the sender says it posted a form, the JSON body otherwise (400 when it is not JSON). */
export function readBody(req: InboundWebhook): unknown {
  return isForm(req.headers['content-type']) ? formFields(req.rawBody) : jsonBody(req);
}
