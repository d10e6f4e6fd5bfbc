/**
 * Code host provider: webhooks from GitHub, Gitea and Forgejo become push, pull request, issue,
 * comment, release and failed-CI events. Every delivery is verified (HMAC-SHA256 of the raw
 * body with the shared secret) and accepted once (delivery ids are remembered for seven days).
 */
import { defineProvider } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import { ConfigSchema } from './config.ts';
import { events } from './events.ts';
import { handleDelivery } from './handler.ts';
import { verifySignature } from './headers.ts';
import { templates } from './templates.ts';

export default defineProvider({
  manifest: {
    id: 'codehost',
    kind: 'provider',
    apiVersion: 1,
    displayName: 'Code host (GitHub, Gitea, Forgejo)',
    locales: { en: enLocale, ru: ruLocale },
    description: 'Pushes, pull requests, issues, comments, releases and failed CI runs from repository webhooks.',
    configSchema: ConfigSchema,
    ingest: 'webhook',
    webhook: { maxBodyBytes: 5 * 1024 * 1024 },
    events,
    templates,
  },
  create(ctx) {
    const deps = { config: ctx.config, log: ctx.log };
    return {
      verifyWebhook: (req) => verifySignature(ctx.config.host, ctx.config.webhook_secret, req),
      handleWebhook: (req) => handleDelivery(deps, req),
    };
  },
});
