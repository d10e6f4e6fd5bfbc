/**
 * Gotify-compatible provider: Herald answers Gotify's `POST /message` at
 * `/api/compat/gotify/message`, so any app or script made for Gotify (Apprise's `gotify://`, curl,
 * the Gotify CLI) posts to Herald unchanged. The app's server is `<public URL>/api/compat/gotify`
 * and its application token is this provider's webhook token (in `X-Gotify-Key`, `?token=` or
 * `Authorization: Bearer`). Rate limit, body limit, payload log and durability are the core's.
 */
import { createHash } from 'node:crypto';
import type { DialectAnswer, DialectRequest, InboundWebhook, WebhookResult } from '@herald/plugin-api';
import { defineProvider, Type } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import { events } from './events.ts';
import { readMessage, severityOf } from './message.ts';
import { templates } from './templates.ts';

/** Where the route lives; the app is told `<public URL>/api/compat/gotify`. */
export const BASE_PATH = '/api/compat/gotify';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Request Entity Too Large',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** The token as Gotify looks for it: `?token=`, then `X-Gotify-Key`, then `Authorization: Bearer`. */
export function gotifyToken(req: Pick<DialectRequest, 'headers' | 'query'>): string | undefined {
  const bearer = /^bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
  return req.query.token || req.headers['x-gotify-key'] || bearer || undefined;
}

/**
 * Gotify's error object: `{ error, errorCode, errorDescription }`, with its own sentence for a missing or wrong token.
 */
export function gotifyError(status: number, detail: string): DialectAnswer {
  const description =
    status === 401 ? 'you need to provide a valid access token or user credentials to access this api' : detail;
  return { body: { error: STATUS_TEXT[status] ?? 'Error', errorCode: status, errorDescription: description } };
}

/** A stable number for a string (Gotify's ids are numbers): 52 bits of its SHA-256. */
export function numericId(s: string): number {
  return Number.parseInt(createHash('sha256').update(s).digest('hex').slice(0, 13), 16);
}

export default defineProvider({
  manifest: {
    id: 'gotify',
    kind: 'provider',
    apiVersion: 1,
    displayName: 'Gotify (compatible server)',
    description: 'Receives messages from apps and scripts made for a Gotify server.',
    locales: { en: enLocale, ru: ruLocale },
    configSchema: Type.Object(
      {
        default_priority: Type.Integer({
          minimum: 0,
          maximum: 10,
          default: 0,
          description: "Priority of a message sent without one, as a Gotify application's default priority.",
        }),
      },
      { additionalProperties: false },
    ),
    ingest: 'webhook',
    webhook: {
      rateLimitPerMinute: 120,
      maxBodyBytes: 256 * 1024,
      routes: [
        {
          method: 'POST',
          path: `${BASE_PATH}/message`,
          summary: 'Gotify: create a message',
          description:
            "Gotify's POST /message: JSON, a urlencoded or multipart form, or the query string; the application " +
            'token in X-Gotify-Key, ?token= or Authorization: Bearer. 200 with the message object; refusals in ' +
            "Gotify's error shape (401 for a missing or unknown token, 400 without a message).",
          token: gotifyToken,
          unknownToken: 401,
          errorBody: ({ status, detail }) => gotifyError(status, detail),
        },
      ],
      connection: (publicUrl, token) => ({
        url: `${publicUrl}${BASE_PATH}/message?token=${token}`,
        fields: [
          { key: 'server_url', value: `${publicUrl}${BASE_PATH}` },
          { key: 'app_token', value: token, secret: true },
        ],
        example: `curl '${publicUrl}${BASE_PATH}/message?token=${token}' -F title='Backup' -F message='Backup done'`,
      }),
    },
    events,
    templates,
  },
  create(ctx) {
    const appId = numericId(ctx.instanceId) % 2 ** 31;
    return {
      async handleWebhook(req: InboundWebhook): Promise<WebhookResult> {
        const m = readMessage(req, ctx.config.default_priority);
        const payload: Record<string, unknown> = {
          title: m.title,
          message: m.message,
          priority: m.priority,
          markdown: m.markdown,
          source_ip: req.ip,
        };
        if (m.url) payload.url = m.url;
        const date = ctx.clock.now().toISOString();
        return {
          events: [{ type: 'gotify_message', payload, severity: severityOf(m.priority) }],
          // Gotify's answer: the stored message, its id a number.
          respond: ({ eventIds }) => ({
            body: {
              id: numericId(eventIds[0] ?? `${ctx.instanceId}:${date}`),
              appid: appId,
              message: m.message,
              title: m.title,
              priority: m.priority,
              date,
              ...(m.extras ? { extras: m.extras } : {}),
            },
          }),
        };
      },
    };
  },
});
