/**
 * @herald/target-apprise-api: delivers notifications through the operator's own Apprise API
 * server (caronc/apprise-api), and so to every service Apprise knows. One instance is one server
 * and either a configuration key saved there or a list of Apprise URLs.
 */

import type { OutboundMessage, OutboundResponse, SendResult, TargetContext, TargetInstance } from '@herald/plugin-api';
import { defineTarget, NOT_SUPPORTED, PLUGIN_API_VERSION } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import type { AppriseApiConfig } from './config.ts';
import { configSchema, validateAppriseApiConfig } from './config.ts';
import { buildPayload, MAX_BODY, MAX_TITLE } from './payload.ts';
import { failureFor, logLines, redactor, sentCount, transportFailure } from './responses.ts';
import { words } from './strings.ts';

export type { AppriseApiConfig } from './config.ts';
export { configSchema, validateAppriseApiConfig } from './config.ts';
export { buildPayload, MAX_BODY, MAX_TITLE, NOTIFY_TYPE } from './payload.ts';
export { updatePrefix } from './strings.ts';

/** Sent with every request, the same on every retry of a delivery; Apprise ignores it. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** The `/notify` endpoint of the server: `/notify/<key>` for a saved configuration, `/notify` with URLs. */
export function notifyUrl(cfg: AppriseApiConfig): string {
  const base = cfg.url.replace(/\/+$/, '');
  return cfg.key ? `${base}/notify/${encodeURIComponent(cfg.key)}` : `${base}/notify`;
}

/** Creates the target instance for one Apprise API server. */
export function createAppriseApiTarget(ctx: TargetContext<AppriseApiConfig>): TargetInstance {
  const cfg = ctx.config;
  const endpoint = notifyUrl(cfg);
  const redact = redactor([cfg.urls, cfg.password]);
  const headers: Record<string, string> = {
    accept: 'application/json',
    // Info lines name each service that took the notification: the answer to a partial failure
    // (424) then says whether a retry would repeat it to some.
    'x-apprise-log-level': 'INFO',
  };
  if (cfg.username && cfg.password)
    headers.authorization = `Basic ${Buffer.from(`${cfg.username}:${cfg.password}`).toString('base64')}`;

  async function post(message: OutboundMessage, signal: AbortSignal, previousTitle?: string): Promise<SendResult> {
    const payload = buildPayload(cfg, message, previousTitle);
    let res: OutboundResponse;
    try {
      // Apprise answers once every service was tried, each with its own timeouts: allow a minute.
      res = await ctx.http.request(endpoint, {
        method: 'POST',
        json: payload.json,
        signal,
        maxRedirects: 0,
        maxResponseBytes: 1024 * 1024,
        timeoutMs: 60_000,
        headers: { ...headers, [IDEMPOTENCY_HEADER]: message.deliveryId },
      });
    } catch (err) {
      throw transportFailure(message.locale, err);
    }
    // 204 is "nothing to notify", not a delivery.
    if (res.status !== 200 && res.status !== 201 && res.status !== 202)
      throw failureFor(message.locale, res, ctx.clock.now(), cfg.key, redact);
    const w = words(message.locale);
    const sent = sentCount(logLines(res));
    if (payload.cut) ctx.log.warn({ deliveryId: message.deliveryId, cut: payload.cut }, 'message cut to fit the limit');
    const detail =
      [sent ? w.notified(sent) : '', payload.cut ? w.cut(payload.cut) : ''].filter(Boolean).join('; ') || undefined;
    const title = (message.plainTitle || message.plainBody.split('\n')[0] || '')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 200);
    // Apprise returns no message id, and the services behind it cannot be edited through it.
    return { detail, messageRef: { title } };
  }

  return {
    send: (message, { signal }) => post(message, signal),
    async update() {
      return NOT_SUPPORTED;
    },
    /** A new notification that opens with "Update to “<earlier title>”:" in the target's language. */
    async reply({ previous, message }, { signal }) {
      const title = previous.messageRef.title;
      if (typeof title !== 'string') return NOT_SUPPORTED;
      return post(message, signal, title);
    },
  };
}

export default defineTarget({
  manifest: {
    id: 'apprise_api',
    kind: 'target',
    apiVersion: PLUGIN_API_VERSION,
    displayName: 'Apprise API',
    description: 'Delivers notifications through your Apprise API server to any service Apprise supports.',
    locales: { en: enLocale, ru: ruLocale },
    configSchema,
    // Markdown first so both renderings reach the plugin: `body_format` picks the Markdown one or
    // the plain one. Apprise fits the text to each service itself; 32 KB keeps a request sane.
    limits: { maxMessageLength: MAX_BODY, maxTitleLength: MAX_TITLE, formats: ['markdown'], overflow: 'truncate' },
  },
  validateConfig: validateAppriseApiConfig,
  create: (ctx) => createAppriseApiTarget(ctx),
});
