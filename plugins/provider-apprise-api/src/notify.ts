/**
 * The Apprise API's `POST /notify/{KEY}` as it reads a notification: a JSON body when the
 * Content-Type says JSON, a urlencoded or multipart form otherwise (whether it says so or not),
 * `{ body, title, type, format, tag }`, with `title`, `type`, `format` and `tag` also taken from
 * the query string when the body leaves them out.
 */

import type { InboundWebhook, Severity } from '@herald/plugin-api';
import { parseJsonBounded, WebhookRejectedError } from '@herald/plugin-api';
import { mediaType, multipartFields, urlencodedFields } from './form.ts';

export const TYPES = ['info', 'success', 'warning', 'failure'] as const;
export const FORMATS = ['text', 'markdown', 'html'] as const;
export type NotifyType = (typeof TYPES)[number];
export type BodyFormat = (typeof FORMATS)[number];

/** The Apprise API's sentences for what it refuses. */
export const ERRORS = {
  json: 'Invalid JSON Payload provided',
  form: 'Bad FORM Payload provided',
  minimum: 'Payload lacks minimum requirements',
  format: 'An invalid body input format was specified',
  tag: 'Unsupported characters found in tag definition',
} as const;

export interface AppriseNotification {
  title: string;
  /** As sent; for `format: html`, the text of the HTML. */
  body: string;
  type: NotifyType;
  format: BodyFormat;
  tags: string[];
}

/** `info` and `success` are info, `warning` a warning, `failure` critical. */
export function severityOf(type: NotifyType): Severity {
  return type === 'failure' ? 'critical' : type === 'warning' ? 'warning' : 'info';
}

/**
 * Whether the client reads JSON answers, as the Apprise API decides: `Accept` says JSON, or says nothing in particular
 * and the request was JSON.
 */
export function wantsJson(headers: Record<string, string | undefined>): boolean {
  const json = /^(text|application)\/(x-)?json/i;
  const accept = headers.accept ?? '';
  return json.test(accept) || (/^\s*(\*\/\*|)\s*$/.test(accept) && json.test(headers['content-type'] ?? ''));
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** The text of an HTML body: block ends and `<br>` as line breaks, tags dropped, entities decoded. */
export function htmlText(html: string): string {
  return html
    .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|li|tr|h[1-6]|pre|blockquote)\s*>/gi, '\n')
    .replace(/<[^>]{0,2000}>/g, '')
    .replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,6});/gi, (m, e: string) => {
      if (e[0] === '#') {
        const code = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10);
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
      }
      return ENTITIES[e.toLowerCase()] ?? m;
    })
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function tagsOf(v: unknown): string[] {
  if (v === undefined || v === null || v === '') return [];
  if (typeof v === 'string') {
    if (!/^[\w\s,&+.:@-]*$/u.test(v)) throw new WebhookRejectedError(400, ERRORS.tag);
    return v.split(/[\s,]+/).filter(Boolean);
  }
  if (Array.isArray(v) && v.every((x) => typeof x === 'string'))
    return (v as string[]).map((s) => s.trim()).filter(Boolean);
  throw new WebhookRejectedError(400, ERRORS.tag);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function readNotification(req: InboundWebhook): AppriseNotification {
  const contentType = req.headers['content-type'];
  let content: Record<string, unknown>;
  if (/^(text|application)\/(x-)?json/i.test(contentType ?? '')) {
    let body: unknown;
    try {
      body = req.body !== undefined ? req.body : parseJsonBounded(req.rawBody);
    } catch {
      throw new WebhookRejectedError(400, ERRORS.json);
    }
    if (!isObject(body)) throw new WebhookRejectedError(400, ERRORS.json);
    content = body;
  } else {
    const type = mediaType(contentType);
    const form =
      type === 'multipart/form-data' ? multipartFields(req.rawBody, contentType) : urlencodedFields(req.rawBody);
    if (!form) throw new WebhookRejectedError(400, ERRORS.form);
    content = Object.fromEntries(form);
  }
  const text = (k: string): string | undefined => {
    const v = content[k] ?? req.query[k];
    return typeof v === 'string' ? v : v === undefined || v === null ? undefined : String(v);
  };
  const body = text('body') ?? '';
  const type = (text('type') || 'info').toLowerCase();
  if (!body.trim() || !(TYPES as readonly string[]).includes(type)) throw new WebhookRejectedError(400, ERRORS.minimum);
  const format = (text('format') || 'text').toLowerCase();
  if (!(FORMATS as readonly string[]).includes(format)) throw new WebhookRejectedError(400, ERRORS.format);
  return {
    title: text('title') ?? '',
    body: format === 'html' ? htmlText(body) : body,
    type: type as NotifyType,
    format: format as BodyFormat,
    tags: tagsOf(content.tag ?? content.tags ?? req.query.tag ?? req.query.tags),
  };
}
