/**
 * The notification as Uptime Kuma posts it, by its "Request Body" setting: `application/json`
 * (the JSON object itself) or `multipart/form-data` (the same JSON as the text of a `data` field).
 */

import type { InboundWebhook } from '@herald/plugin-api';
import { jsonBody, parseJsonBounded, WebhookRejectedError } from '@herald/plugin-api';

const MULTIPART = /^multipart\/form-data\s*(?:;(.*))?$/i;
const BOUNDARY = /(?:^|;)\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i;
const DATA_FIELD = /^content-disposition:\s*form-data\s*;(?:.*;)?\s*name="?data"?\s*(?:;|$)/im;

/**
 * The text of the form field named `data` in a multipart body, or undefined when there is none.
 * Parts are delimited by `--<boundary>` lines; a part's headers end at the first empty line and
 * its content at the CRLF before the next delimiter.
 */
export function multipartField(raw: Buffer, boundary: string): string | undefined {
  const text = raw.toString('utf8');
  const delimiter = `--${boundary}`;
  for (const chunk of text.split(delimiter).slice(1)) {
    if (chunk.startsWith('--')) break; // the closing delimiter
    const part = chunk.replace(/^\r?\n/, '');
    const end = part.search(/\r?\n\r?\n/);
    if (end < 0) continue;
    const headers = part.slice(0, end);
    if (!DATA_FIELD.test(headers)) continue;
    const content = part.slice(end).replace(/^\r?\n\r?\n/, '');
    return content.replace(/\r?\n$/, '');
  }
  return undefined;
}

/** The posted notification: a form's `data` field parsed as JSON, else the JSON body (400 when it is not JSON). */
export function readNotification(req: InboundWebhook): unknown {
  const form = MULTIPART.exec(req.headers['content-type']?.trim() ?? '');
  if (!form) return jsonBody(req);
  const b = BOUNDARY.exec(form[1] ?? '');
  if (!b) throw new WebhookRejectedError(400, 'multipart/form-data without a boundary');
  const data = multipartField(req.rawBody, (b[1] ?? b[2])!);
  if (data === undefined)
    throw new WebhookRejectedError(
      422,
      'the multipart/form-data body has no "data" field (Uptime Kuma\'s form-data body sends the notification there)',
    );
  return parseJsonBounded(data, 'the data field');
}
