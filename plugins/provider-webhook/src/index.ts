/**
 * Generic webhook provider: any service that can POST JSON (or a urlencoded form) becomes a
 * notification source.
 * Authentication is bearer, HMAC-SHA256 or (explicitly acknowledged) none; a mapping of path
 * expressions picks the title, body, severity and event key out of the body.
 * Rate limiting and payload logging are done by the core.
 */

import type { InboundWebhook, WebhookResult } from '@herald/plugin-api';
import { ConfigError, defineProvider } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import { verifyAuth } from './auth.ts';
import { readBody } from './body.ts';
import type { WebhookConfig } from './config.ts';
import { CONFIG_ALIASES, ConfigSchema, checkConfig, MIN_SECRET_LENGTH } from './config.ts';
import { events } from './events.ts';
import type { CompiledMapping } from './mapping.ts';
import { applyMapping, compileMapping } from './mapping.ts';
import { PathExpressionError } from './path-expr.ts';
import { templates } from './templates.ts';

/** Checks the parts of the config a schema cannot express and compiles the mapping. */
function prepare(cfg: WebhookConfig): CompiledMapping {
  if (cfg.auth_mode !== 'none') {
    if (!cfg.secret) throw new ConfigError(`auth_mode ${cfg.auth_mode} needs a secret`);
    if (cfg.secret.length < MIN_SECRET_LENGTH)
      throw new ConfigError(`the secret must be at least ${MIN_SECRET_LENGTH} characters long`);
  }
  try {
    return compileMapping(cfg.mapping);
  } catch (err) {
    if (err instanceof PathExpressionError) throw new ConfigError(err.message);
    throw err;
  }
}

export default defineProvider({
  manifest: {
    id: 'webhook',
    kind: 'provider',
    apiVersion: 1,
    displayName: 'Generic webhook',
    locales: { en: enLocale, ru: ruLocale },
    description: 'Receives JSON or form webhooks from any service and maps them to notifications.',
    configSchema: ConfigSchema,
    configAliases: CONFIG_ALIASES,
    ingest: 'webhook',
    webhook: { rateLimitPerMinute: 60, maxBodyBytes: 1024 * 1024 },
    events,
    templates,
  },
  validateConfig(cfg) {
    const problems = checkConfig(cfg);
    if (problems.length) return problems;
    // A mapping that does not compile would stop the instance at start: refused when saved instead.
    try {
      compileMapping(cfg.mapping);
    } catch (err) {
      if (!(err instanceof PathExpressionError)) throw err;
      const field = /mapping\.(\w+)/.exec(err.message)?.[1];
      return [
        { path: field ? `/mapping/${field}` : '/mapping', message: err.message, code: 'invalid_path_expression' },
      ];
    }
    return [];
  },
  create(ctx) {
    const cfg = ctx.config;
    const mapping = prepare(cfg);
    if (cfg.auth_mode === 'none' && !cfg.acknowledge_unauthenticated) {
      ctx.log.warn({ auth_mode: 'none' }, 'webhook requests are refused until acknowledge_unauthenticated is true');
    }
    return {
      verifyWebhook: (req) => verifyAuth(cfg, req),
      async handleWebhook(req: InboundWebhook): Promise<WebhookResult> {
        const mapped = applyMapping(mapping, readBody(req));
        const payload: Record<string, unknown> = {
          title: mapped.title,
          body: mapped.body,
          severity: mapped.severity,
          source_ip: req.ip,
          fields: mapped.fields,
        };
        if (mapped.event_key !== undefined) payload.event_key = mapped.event_key;
        return { events: [{ type: 'webhook_received', payload, severity: mapped.severity }] };
      },
    };
  },
});
