/**
 * Uptime Kuma provider: an Uptime Kuma "Webhook" notification posts each important heartbeat of
 * its monitors to this provider's webhook URL (as JSON, or as the `data` field of a
 * multipart/form-data body); a monitor's states are one message per monitor, which "up" edits
 * after "down". The notification's test and monitor-less messages (certificate or domain expiry)
 * arrive as events of their own.
 */

import type { InboundWebhook, WebhookResult } from '@herald/plugin-api';
import { ConfigError, defineProvider } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import { verifyAuth } from './auth.ts';
import { readNotification } from './body.ts';
import { ConfigSchema, configProblems } from './config.ts';
import { EVENTS } from './events.ts';
import { toEvent } from './notification.ts';
import { TEMPLATES } from './templates.ts';

export default defineProvider({
  manifest: {
    id: 'uptime_kuma',
    kind: 'provider',
    apiVersion: 1,
    displayName: 'Uptime Kuma',
    description:
      'Receives Uptime Kuma webhook notifications: one message per monitor, updated when it goes down and comes ' +
      'back up.',
    locales: { en: enLocale, ru: ruLocale },
    configSchema: ConfigSchema,
    ingest: 'webhook',
    // One request per monitor and state change: a network outage brings one per monitor at once,
    // and Uptime Kuma does not retry a refused notification.
    webhook: { rateLimitPerMinute: 600, maxBodyBytes: 512 * 1024 },
    events: EVENTS,
    templates: TEMPLATES,
  },
  validateConfig: configProblems,
  create(ctx) {
    const cfg = ctx.config;
    const problem = configProblems(cfg)[0];
    if (problem) throw new ConfigError(problem.detail ?? `${problem.path.slice(1)} ${problem.message}`);
    return {
      verifyWebhook: (req) => verifyAuth(cfg, req),
      async handleWebhook(req: InboundWebhook): Promise<WebhookResult> {
        return { events: [toEvent(readNotification(req))] };
      },
    };
  },
});
