/**
 * Prometheus Alertmanager provider: Alertmanager's webhook receiver (`webhook_configs`) posts its
 * notifications to this provider's webhook URL; each alert becomes an `alert_firing` or
 * `alert_resolved` event, correlated by fingerprint so that the resolution edits the message of
 * the firing alert. Authenticated from the headers (bearer or basic, as `http_config` sends them)
 * before the body is read.
 */

import type { InboundWebhook, WebhookResult } from '@herald/plugin-api';
import { ConfigError, defineProvider, jsonBody } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import { parseNotification, toEvents } from './alerts.ts';
import { verifyAuth } from './auth.ts';
import { ConfigSchema, configProblems } from './config.ts';
import { EVENTS } from './events.ts';
import { TEMPLATES } from './templates.ts';

export default defineProvider({
  manifest: {
    id: 'alertmanager',
    kind: 'provider',
    apiVersion: 1,
    displayName: 'Prometheus Alertmanager',
    description:
      'Receives Alertmanager webhook notifications: one message per alert, updated when the alert is resolved.',
    locales: { en: enLocale, ru: ruLocale },
    configSchema: ConfigSchema,
    ingest: 'webhook',
    // Alertmanager sends one request per alert group and interval, and retries failures itself.
    webhook: { rateLimitPerMinute: 240, maxBodyBytes: 1024 * 1024 },
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
        const events = toEvents(parseNotification(jsonBody(req)));
        // A notification without alerts (none has ever been seen) is answered without events.
        return events.length ? { events } : { events, status: 200, body: { accepted: 0 } };
      },
    };
  },
});
