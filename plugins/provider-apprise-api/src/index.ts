/**
 * Apprise-API-compatible provider: Herald answers the Apprise API's stateful
 * `POST /notify/{KEY}` at `/api/compat/apprise/notify/<key>`, so Apprise's `apprise://` URLs and
 * anything posting to an Apprise API server reach Herald unchanged. The key is this provider's
 * webhook token (32 characters: Apprise accepts keys of at most 32). Rate limit, body limit,
 * payload log and durability are the core's.
 */

import type { DialectAnswer, InboundWebhook, WebhookResult } from '@herald/plugin-api';
import { defineProvider, Type } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import { events } from './events.ts';
import { readNotification, severityOf, wantsJson } from './notify.ts';
import { templates } from './templates.ts';

export const BASE_PATH = '/api/compat/apprise';

/** An answer as the Apprise API words it: JSON `{ error, details }` for a client that reads JSON, text otherwise. */
export function appriseAnswer(
  headers: Record<string, string | undefined>,
  error: string | null,
  text: string,
): DialectAnswer {
  return wantsJson(headers)
    ? { body: error === null ? { error: null, details: text } : { error } }
    : { body: error ?? text };
}

/** The `apprise://` (or `apprises://` over HTTPS) URL of a key on a public URL. */
export function appriseUrl(publicUrl: string, token: string): string {
  const u = new URL(publicUrl);
  const path = u.pathname.replace(/\/$/, '');
  return `${u.protocol === 'https:' ? 'apprises' : 'apprise'}://${u.host}${path}${BASE_PATH}/${token}`;
}

export default defineProvider({
  manifest: {
    id: 'apprise_api',
    kind: 'provider',
    apiVersion: 1,
    displayName: 'Apprise API (compatible server)',
    description: 'Receives notifications from Apprise and anything else made for an Apprise API server.',
    locales: { en: enLocale, ru: ruLocale },
    configSchema: Type.Object({}, { additionalProperties: false }),
    ingest: 'webhook',
    webhook: {
      rateLimitPerMinute: 120,
      maxBodyBytes: 256 * 1024,
      // Apprise checks an Apprise API key against [A-Za-z0-9_-]{1,32}: 24 random bytes are 32 characters.
      tokenBytes: 24,
      routes: [
        {
          method: 'POST',
          path: `${BASE_PATH}/notify/:token`,
          credentialParams: ['token'],
          summary: 'Apprise API: send a notification to a key',
          description:
            "The Apprise API's POST /notify/{KEY}: JSON when the Content-Type says so, else a urlencoded or " +
            'multipart form, { body, title, type (info, success, warning, failure), format (text, markdown, ' +
            "html), tag }. The key is the provider's token. 200 once stored; refusals as the Apprise API words " +
            'them (JSON { error } for a JSON client, text otherwise), 404 for an unknown key.',
          token: (req) => req.params.token,
          errorBody: ({ detail }, req) => appriseAnswer(req.headers, detail, ''),
        },
      ],
      connection: (publicUrl, token) => ({
        url: appriseUrl(publicUrl, token),
        fields: [
          { key: 'apprise_url', value: appriseUrl(publicUrl, token), secret: true },
          { key: 'notify_url', value: `${publicUrl}${BASE_PATH}/notify/${token}`, secret: true },
        ],
        example:
          `curl -X POST -d '{"body":"Backup done"}' -H 'Content-Type: application/json' ` +
          `${publicUrl}${BASE_PATH}/notify/${token}`,
      }),
    },
    events,
    templates,
  },
  create() {
    return {
      async handleWebhook(req: InboundWebhook): Promise<WebhookResult> {
        const n = readNotification(req);
        const payload = {
          title: n.title,
          body: n.body,
          type: n.type,
          format: n.format,
          markdown: n.format === 'markdown',
          tags: n.tags,
          source_ip: req.ip,
        };
        return {
          events: [{ type: 'apprise_notification', payload, severity: severityOf(n.type) }],
          respond: () => appriseAnswer(req.headers, null, 'Notification(s) sent.'),
        };
      },
    };
  },
});
