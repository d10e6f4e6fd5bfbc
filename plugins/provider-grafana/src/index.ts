/**
 * Grafana alerting provider: a Grafana webhook contact point posts its notifications to this
 * provider's webhook URL; each alert becomes a `grafana_alert_firing` or `grafana_alert_resolved`
 * event, correlated by fingerprint so that the resolution edits the message of the firing alert.
 * Authenticated by bearer or basic (from the headers) or by Grafana's HMAC signature of the body.
 */

import type { InboundWebhook, WebhookResult } from '@herald/plugin-api';
import { ConfigError, defineProvider, jsonBody, WebhookRejectedError } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import { parseNotification, toEvents } from './alerts.ts';
import { MAX_SKEW_SECONDS, signatureOf, verifyAuth } from './auth.ts';
import { ConfigSchema, configProblems } from './config.ts';
import { EVENTS } from './events.ts';
import { TEMPLATES } from './templates.ts';

export default defineProvider({
  manifest: {
    id: 'grafana',
    kind: 'provider',
    apiVersion: 1,
    displayName: 'Grafana alerting',
    description:
      'Receives notifications of a Grafana webhook contact point: one message per alert, updated when the alert ' +
      'is resolved.',
    locales: { en: enLocale, ru: ruLocale },
    configSchema: ConfigSchema,
    ingest: 'webhook',
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
      verifyWebhook: (req) => verifyAuth(cfg, req, ctx.clock.now()),
      async handleWebhook(req: InboundWebhook): Promise<WebhookResult> {
        // A signed timestamp makes each request unique: the same one again is a replay.
        let replayKey: WebhookResult['replayKey'];
        if (cfg.auth === 'hmac' && cfg.timestamp_header) {
          const key = `signature:${signatureOf(cfg, req).signature}`;
          if (await ctx.store.get(key)) throw new WebhookRejectedError(409, 'this signed request was already received');
          replayKey = { key, ttlSeconds: 2 * MAX_SKEW_SECONDS };
        }
        const events = toEvents(parseNotification(jsonBody(req)));
        if (!events.length) return { events, status: 200, body: { accepted: 0 } };
        return replayKey ? { events, replayKey } : { events };
      },
    };
  },
});
