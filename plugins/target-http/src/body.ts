/**
 * The request body for one message: the configured template filled in, or Herald's default body for the content type.
 */
import type { OutboundMessage } from '@herald/plugin-api';
import type { HttpConfig } from './config.ts';
import type { ContentType, Template, Values } from './template.ts';
import { render } from './template.ts';
import { text } from './text.ts';

export const CONTENT_TYPES: Record<ContentType, string> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
  text: 'text/plain; charset=utf-8',
};

/** The earlier message a reply updates. */
export interface Previous {
  deliveryId: string;
  title: string;
}

export function valuesOf(m: OutboundMessage, previous?: Previous): Values {
  return {
    title: m.plainTitle,
    text: m.plainBody,
    severity: m.severity,
    event_type: m.eventType,
    url: m.url ?? '',
    locale: m.locale,
    delivery_id: m.deliveryId,
    event_id: m.eventId,
    test: m.test === true,
    in_reply_to: previous?.deliveryId ?? '',
    previous_title: previous?.title ?? '',
  };
}

/**
 * Herald's default body: for `json` and `form` every value by name (`url` only when the event has
 * a link, `in_reply_to` and `previous_title` only on an update); for `text` the title, a blank
 * line and the text (opened by "Update to “…”:" on an update, the link last when the text lacks it).
 */
export function defaultBody(type: ContentType, v: Values): string {
  const { url, in_reply_to, previous_title, ...rest } = v;
  const fields = { ...rest, ...(url ? { url } : {}), ...(in_reply_to ? { in_reply_to, previous_title } : {}) };
  if (type === 'json') return JSON.stringify(fields);
  if (type === 'form') return new URLSearchParams(Object.entries(fields).map(([k, x]) => [k, String(x)])).toString();
  const lines = [
    ...(in_reply_to ? [text.updatePrefix(v.locale as OutboundMessage['locale'], previous_title)] : []),
    ...(v.title ? [v.title, ''] : []),
    v.text,
    ...(url && !v.text.includes(url) ? ['', url] : []),
  ];
  return lines.join('\n');
}

/** The body to send, or undefined when the template's output passes the bound. */
export function buildBody(
  cfg: HttpConfig,
  template: Template | undefined,
  m: OutboundMessage,
  previous?: Previous,
): string | undefined {
  const type = cfg.content_type ?? 'json';
  const values = valuesOf(m, previous);
  return template ? render(template, values, type) : defaultBody(type, values);
}
