/**
 * Planka provider: Planka 2's built-in webhooks become card events (created, moved, edited,
 * commented, due date set). Planka sends the webhook's access token as a bearer token.
 */

import type { InboundWebhook, WebhookResult } from '@herald/plugin-api';
import { defineProvider, jsonBody } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import { verifyBearer } from './auth.ts';
import { ConfigSchema } from './config.ts';
import { events } from './events.ts';
import { normalize } from './normalize.ts';
import { templates } from './templates.ts';

export default defineProvider({
  manifest: {
    id: 'planka',
    kind: 'provider',
    apiVersion: 1,
    displayName: 'Planka (kanban)',
    locales: { en: enLocale, ru: ruLocale },
    description: 'Card events from Planka webhooks: created, moved, edited, commented, due date set.',
    configSchema: ConfigSchema,
    ingest: 'webhook',
    events,
    templates,
  },
  create(ctx) {
    const { access_token: token, base_url: baseUrl } = ctx.config;
    return {
      verifyWebhook: (req) => verifyBearer(req, token),
      async handleWebhook(req: InboundWebhook): Promise<WebhookResult> {
        const { event, events: emitted } = normalize(jsonBody(req), { baseUrl });
        if (!emitted?.length) {
          ctx.log.debug({ event }, 'planka event ignored');
          return { status: 200, body: { ignored: true }, events: [] };
        }
        return { events: emitted };
      },
    };
  },
});
