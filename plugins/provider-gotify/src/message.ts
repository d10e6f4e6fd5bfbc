/**
 * Gotify's `POST /message` as its server reads it: JSON (with `extras`), a urlencoded or
 * multipart form, or the query string alone, `message` required, `priority` the application's
 * default when absent; and the priority's severity in Herald.
 */

import type { InboundWebhook, Severity } from '@herald/plugin-api';
import { parseJsonBounded, WebhookRejectedError } from '@herald/plugin-api';
import { mediaType, multipartFields, urlencodedFields } from './form.ts';

/** A message as Gotify accepted it. */
export interface GotifyMessage {
  title: string;
  message: string;
  priority: number;
  /** `extras["client::display"].contentType` is `text/markdown`. */
  markdown: boolean;
  /** `extras["client::notification"].click.url`, when it is an http(s) URL. */
  url?: string;
  /** The extras as sent (JSON only), echoed in the answer. */
  extras?: Record<string, unknown>;
}

/** Gotify's wording for a field its binding refused. */
const badField = (field: string) => new WebhookRejectedError(400, `Field '${field}' is not valid`);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Gotify priorities 0–3 are low (info), 4–7 normal (warning), 8 and above high (critical). */
export function severityOf(priority: number): Severity {
  return priority >= 8 ? 'critical' : priority >= 4 ? 'warning' : 'info';
}

/** A form or query value as Gotify's binding reads an integer. */
function formInt(v: string): number {
  const t = v.trim();
  if (!/^[+-]?\d{1,9}$/.test(t)) throw badField('priority');
  return Number(t);
}

function fromExtras(extras: Record<string, unknown>): Pick<GotifyMessage, 'markdown' | 'url'> {
  const display = extras['client::display'];
  const markdown =
    isObject(display) &&
    typeof display.contentType === 'string' &&
    display.contentType.trim().toLowerCase() === 'text/markdown';
  const notification = extras['client::notification'];
  const click = isObject(notification) && isObject(notification.click) ? notification.click.url : undefined;
  const url = typeof click === 'string' && /^https?:\/\/\S+$/i.test(click) ? click : undefined;
  return { markdown, ...(url ? { url } : {}) };
}

/**
 * Reads the message from the request. JSON bodies (Content-Type `application/json`) carry
 * `extras`; forms and the query string cannot (as in Gotify, a form's values come before the
 * query's). 400 with Gotify's wording for a missing `message` or a field of the wrong type.
 */
export function readMessage(req: InboundWebhook, defaultPriority: number): GotifyMessage {
  const type = mediaType(req.headers['content-type']);
  if (type === 'application/json') {
    const body = req.body !== undefined ? req.body : req.rawBody.length ? parseJsonBounded(req.rawBody) : undefined;
    if (!isObject(body)) throw new WebhookRejectedError(400, 'the body must be a JSON object');
    const { title, message, priority, extras } = body;
    if (title !== undefined && title !== null && typeof title !== 'string') throw badField('title');
    if (message !== undefined && message !== null && typeof message !== 'string') throw badField('message');
    if (priority !== undefined && priority !== null && !Number.isSafeInteger(priority)) throw badField('priority');
    if (extras !== undefined && extras !== null && !isObject(extras)) throw badField('extras');
    if (!message) throw new WebhookRejectedError(400, "Field 'message' is required");
    return {
      title: (title ?? '').trim() === '' ? '' : (title as string),
      message,
      priority: typeof priority === 'number' ? priority : defaultPriority,
      ...(extras ? { ...fromExtras(extras), extras } : { markdown: false }),
    };
  }
  const form =
    type === 'application/x-www-form-urlencoded'
      ? urlencodedFields(req.rawBody)
      : type === 'multipart/form-data'
        ? (multipartFields(req.rawBody, req.headers['content-type']) ?? new Map<string, string>())
        : new Map<string, string>();
  const field = (name: string): string | undefined => form.get(name) ?? req.query[name];
  const message = field('message');
  if (!message) throw new WebhookRejectedError(400, "Field 'message' is required");
  const title = field('title') ?? '';
  const priority = field('priority');
  return {
    title: title.trim() === '' ? '' : title,
    message,
    priority: priority === undefined || priority === '' ? defaultPriority : formInt(priority),
    markdown: false,
  };
}
