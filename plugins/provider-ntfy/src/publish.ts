/**
 * ntfy's publish API as its server reads it: the message as the body of `PUT`/`POST /<topic>`
 * with its options in headers (`Title`, `X-Title`, `t`…) or the same names as query parameters,
 * or a JSON object posted to the server root (`{ topic, message, title, priority, tags, click,
 * markdown }`), whose fields win over the headers.
 */

import type { InboundWebhook, Severity } from '@herald/plugin-api';
import { parseJsonBounded, WebhookRejectedError } from '@herald/plugin-api';

/** ntfy's topic names; Herald's topics are its webhook tokens (43 characters), always of this shape. */
export const TOPIC = /^[-_A-Za-z0-9]{1,64}$/;
/** What ntfy stores as the message of a publish without one. */
export const EMPTY_MESSAGE = 'triggered';

/** ntfy's sentences for the requests it refuses (the `error` of its error object). */
export const ERRORS = {
  priority: 'invalid priority parameter',
  json: 'invalid request: request body must be message JSON',
  topic: 'invalid request: topic invalid',
  utf8: 'invalid message: message must be UTF-8 encoded',
} as const;

export interface NtfyMessage {
  /** The topic as the request named it (the path, or the JSON's `topic`): answered back, never stored. */
  topic: string;
  title: string;
  message: string;
  /** 1–5; 0 when the sender gave none (ntfy's default, 3, then applies). */
  priority: number;
  tags: string[];
  click: string;
  markdown: boolean;
}

/**
 * A header value as text: Node reads header bytes as Latin-1, so a UTF-8 value (what curl sends
 * for `-H "Title: Привет"`) is read back as UTF-8; RFC 2047 encoded words (`=?UTF-8?B?…?=`) are
 * decoded, as ntfy does.
 */
export function headerText(value: string): string {
  let v = value;
  let latin1 = true;
  for (let i = 0; i < v.length && latin1; i++) latin1 = v.charCodeAt(i) < 0x100;
  if (latin1 && /[\u0080-\u00ff]/.test(v)) {
    const utf8 = Buffer.from(v, 'latin1').toString('utf8');
    if (!utf8.includes('\ufffd')) v = utf8;
  }
  return v.replace(/=\?([-\w]+)\?([BbQq])\?([^?\s]*)\?=/g, (word, charset: string, enc: string, text: string) => {
    const cs = charset.toLowerCase();
    if (cs !== 'utf-8' && cs !== 'utf8' && cs !== 'us-ascii' && cs !== 'iso-8859-1') return word;
    const bytes =
      enc.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64')
        : Buffer.from(
            text
              .replace(/_/g, ' ')
              .replace(/=([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
            'latin1',
          );
    return bytes.toString(cs === 'iso-8859-1' ? 'latin1' : 'utf8');
  });
}

/** ntfy's `readParam`: the first non-empty header of the names, else the first non-empty query parameter. */
function param(req: InboundWebhook, ...names: string[]): string {
  for (const n of names) {
    const v = req.headers[n];
    if (v && headerText(v).trim()) return headerText(v).trim();
  }
  for (const n of names) {
    const v = req.query[n];
    if (typeof v === 'string' && v.trim()) return v.trim();
  }
  return '';
}

/** ntfy's boolean parameters: `1`, `yes`, `true` (any case). */
const truthy = (v: string) => ['1', 'yes', 'true'].includes(v.toLowerCase());

/** ntfy's priorities: 1/min, 2/low, 3/default, 4/high, 5/max or urgent; empty is 0 (not given). */
export function parsePriority(v: string): number {
  switch (v.trim().toLowerCase()) {
    case '':
      return 0;
    case '1':
    case 'min':
      return 1;
    case '2':
    case 'low':
      return 2;
    case '3':
    case 'default':
      return 3;
    case '4':
    case 'high':
      return 4;
    case '5':
    case 'max':
    case 'urgent':
      return 5;
    default:
      throw new WebhookRejectedError(400, ERRORS.priority);
  }
}

/** ntfy priorities 1–3 (and none) are info, 4 (high) a warning, 5 (max, urgent) critical. */
export function severityOf(priority: number): Severity {
  return priority >= 5 ? 'critical' : priority === 4 ? 'warning' : 'info';
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The topic of a JSON publish to the root (the token finder's second look): 400 as ntfy words it when it is not one.
 */
export function jsonTopic(raw: Buffer): string {
  const topic = jsonBody(raw).topic;
  if (typeof topic !== 'string' || !TOPIC.test(topic)) throw new WebhookRejectedError(400, ERRORS.topic);
  return topic;
}

function jsonBody(raw: Buffer): Record<string, unknown> {
  let body: unknown;
  try {
    body = parseJsonBounded(raw);
  } catch {
    throw new WebhookRejectedError(400, ERRORS.json);
  }
  if (!isObject(body)) throw new WebhookRejectedError(400, ERRORS.json);
  return body;
}

/** The message a request publishes: `asJson` for the root route (a JSON object), else the body is the message. */
export function readPublish(req: InboundWebhook, topicParam: string | undefined, asJson: boolean): NtfyMessage {
  const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const m: NtfyMessage = {
    topic: topicParam ?? '',
    title: param(req, 'x-title', 'title', 'ti', 't'),
    message: param(req, 'x-message', 'message', 'm').replaceAll('\\n', '\n'),
    priority: parsePriority(param(req, 'x-priority', 'priority', 'prio', 'p')),
    tags: param(req, 'x-tags', 'tags', 'tag', 'ta')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    click: param(req, 'x-click', 'click'),
    markdown: truthy(param(req, 'x-markdown', 'markdown', 'md')) || contentType === 'text/markdown',
  };
  if (asJson) {
    const j = jsonBody(req.rawBody);
    const str = (k: string): string | undefined => {
      const v = j[k];
      if (v === undefined || v === null) return undefined;
      if (typeof v !== 'string') throw new WebhookRejectedError(400, ERRORS.json);
      return v;
    };
    const topic = str('topic');
    if (!topic || !TOPIC.test(topic)) throw new WebhookRejectedError(400, ERRORS.topic);
    m.topic = topic;
    // As ntfy turns a JSON publish into a request with headers: a field that is set wins.
    m.message = str('message') || EMPTY_MESSAGE;
    m.title = str('title') || m.title;
    m.click = str('click') || m.click;
    const p = j.priority;
    if (p !== undefined && p !== null && p !== 0) {
      if (typeof p === 'number' && Number.isInteger(p) && p >= 1 && p <= 5) m.priority = p;
      else if (typeof p === 'number' || typeof p === 'string') m.priority = parsePriority(String(p));
      else throw new WebhookRejectedError(400, ERRORS.json);
    }
    if (j.tags !== undefined && j.tags !== null) {
      if (!Array.isArray(j.tags) || !j.tags.every((x) => typeof x === 'string'))
        throw new WebhookRejectedError(400, ERRORS.json);
      if (j.tags.length) m.tags = (j.tags as string[]).map((s) => s.trim()).filter(Boolean);
    }
    if (j.markdown !== undefined && j.markdown !== null) {
      if (typeof j.markdown !== 'boolean') throw new WebhookRejectedError(400, ERRORS.json);
      if (j.markdown) m.markdown = true;
    }
    return m;
  }
  const text = req.rawBody.toString('utf8');
  if (req.rawBody.length && !Buffer.from(text, 'utf8').equals(req.rawBody))
    throw new WebhookRejectedError(400, ERRORS.utf8);
  // The body wins over a Message parameter; an empty body leaves it (publishing by parameters).
  if (text.trim()) m.message = text.trim();
  if (!m.message) m.message = EMPTY_MESSAGE;
  return m;
}
