/**
 * ntfy-compatible provider: Herald answers ntfy's publish API at the server root, so anything
 * that publishes to ntfy (curl, Apprise's `ntfy://`, scripts, Uptime Kuma…) publishes to Herald
 * unchanged. The server is Herald's public URL and the topic is this provider's webhook token:
 * `PUT`/`POST /<topic>` with the message as the body, or a JSON object posted to `/`. Rate limit,
 * body limit, payload log and durability are the core's.
 */
import { createHash } from 'node:crypto';
import type { DialectAnswer, DialectRoute, InboundWebhook, WebhookResult } from '@herald/plugin-api';
import { defineProvider, Type } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import { splitTags } from './emoji.ts';
import { events } from './events.ts';
import { ERRORS, jsonTopic, readPublish, severityOf } from './publish.ts';
import { templates } from './templates.ts';

/**
 * The topic segment: only Herald-sized topics (its tokens are 43 characters), so the route never
 * takes the web client's paths (`/favicon.ico`, `/events`) and only such segments are masked in logs.
 */
export const TOPIC_PATH = '/:topic(^[-_A-Za-z0-9]{16,64}$)';
/** How long ntfy keeps a message by default (12 h): the `expires` of the answer. */
const CACHE_SECONDS = 12 * 3600;

/** ntfy's error codes (status × 100 + n) and sentences for the refusals its clients may read. */
const NTFY_ERRORS: Record<string, [number, string]> = {
  [ERRORS.priority]: [40007, ERRORS.priority],
  [ERRORS.json]: [40017, ERRORS.json],
  [ERRORS.topic]: [40009, ERRORS.topic],
  [ERRORS.utf8]: [40011, ERRORS.utf8],
};
const BY_STATUS: Record<number, [number, string]> = {
  401: [40101, 'unauthorized'],
  404: [40401, 'page not found'],
  413: [41301, 'attachment too large, or bandwidth limit reached'],
  429: [42901, 'limit reached: too many requests, please be nice'],
};

/** ntfy's error object: `{ code, http, error }`. */
export function ntfyError(status: number, code: string, detail: string): DialectAnswer {
  const [n, error] =
    NTFY_ERRORS[detail] ??
    (code === 'json_too_deep' ? NTFY_ERRORS[ERRORS.json]! : (BY_STATUS[status] ?? [status * 100 + 1, detail]));
  return { body: { code: n, http: status, error } };
}

/** A 12-character message id (ntfy's length and alphabet) derived from the event's id. */
export function messageId(eventId: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const hash = createHash('sha256').update(eventId).digest();
  let id = '';
  for (let i = 0; i < 12; i++) id += alphabet[hash[i]! % alphabet.length];
  return id;
}

const errorBody: DialectRoute['errorBody'] = ({ status, code, detail }) => ntfyError(status, code, detail);

const topicRoute = (method: 'PUT' | 'POST'): DialectRoute => ({
  method,
  path: TOPIC_PATH,
  credentialParams: ['topic'],
  summary: `ntfy: publish a message to a topic (${method} /{topic})`,
  description:
    "ntfy's publish: the body is the message; Title/X-Title/t, Priority/X-Priority/p, Tags/X-Tags/ta, " +
    'Click/X-Click, Markdown/X-Markdown/md headers or the same names as query parameters (and message=). The ' +
    "topic is the provider's token. 200 with ntfy's message object; refusals in ntfy's error shape, 404 for an " +
    'unknown topic.',
  token: (req) => req.params.topic,
  errorBody,
});

const jsonRoute = (method: 'PUT' | 'POST'): DialectRoute => ({
  method,
  path: '/',
  summary: `ntfy: publish a message as JSON (${method} /)`,
  description:
    "ntfy's JSON publish: { topic, message, title, priority, tags, click, markdown } at the server root, its " +
    "fields winning over the same headers. 200 with ntfy's message object; 400 for a body that is not message " +
    'JSON, 404 for an unknown topic.',
  token: (req) => (req.rawBody ? jsonTopic(req.rawBody) : 'needs_body'),
  errorBody,
});

export default defineProvider({
  manifest: {
    id: 'ntfy',
    kind: 'provider',
    apiVersion: 1,
    displayName: 'ntfy (compatible server)',
    description: "Receives messages published with ntfy's API: curl, scripts and apps made for an ntfy server.",
    locales: { en: enLocale, ru: ruLocale },
    configSchema: Type.Object({}, { additionalProperties: false }),
    ingest: 'webhook',
    webhook: {
      rateLimitPerMinute: 120,
      maxBodyBytes: 64 * 1024,
      routes: [topicRoute('PUT'), topicRoute('POST'), jsonRoute('PUT'), jsonRoute('POST')],
      connection: (publicUrl, token) => ({
        url: `${publicUrl}/${token}`,
        fields: [
          { key: 'server_url', value: publicUrl },
          { key: 'topic', value: token, secret: true },
        ],
        example: `curl -d 'Backup done' ${publicUrl}/${token}`,
      }),
    },
    events,
    templates,
  },
  create(ctx) {
    return {
      async handleWebhook(req: InboundWebhook): Promise<WebhookResult> {
        const asJson = req.route?.path === '/';
        const m = readPublish(req, req.route?.params.topic, asJson);
        const { emojis, tags } = splitTags(m.tags);
        const url = /^https?:\/\/\S+$/i.test(m.click) ? m.click : undefined;
        const priority = m.priority || 3;
        // The topic is the provider's token: it is answered back to the publisher, never stored.
        const payload: Record<string, unknown> = {
          title: m.title,
          message: m.message,
          priority,
          tags,
          emojis: emojis.join(' '),
          markdown: m.markdown,
          source_ip: req.ip,
        };
        if (url) payload.url = url;
        const time = Math.floor(ctx.clock.now().getTime() / 1000);
        return {
          events: [{ type: 'ntfy_message', payload, severity: severityOf(priority) }],
          respond: ({ eventIds }) => ({
            body: {
              id: messageId(eventIds[0] ?? `${ctx.instanceId}:${time}`),
              time,
              expires: time + CACHE_SECONDS,
              event: 'message',
              topic: m.topic,
              ...(m.title ? { title: m.title } : {}),
              message: m.message,
              ...(m.priority ? { priority: m.priority } : {}),
              ...(m.tags.length ? { tags: m.tags } : {}),
              ...(m.click ? { click: m.click } : {}),
              ...(m.markdown ? { content_type: 'text/markdown' } : {}),
            },
          }),
        };
      },
    };
  },
});
