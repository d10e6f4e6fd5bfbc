/**
 * @herald/target-pushover: sends notifications to a Pushover user or group through a Pushover
 * application (`POST /1/messages.json`).
 */

import type { OutboundMessage, OutboundResponse, SendResult, TargetContext, TargetInstance } from '@herald/plugin-api';
import { ConfigError, defineTarget, NOT_SUPPORTED, PLUGIN_API_VERSION } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import type { PushoverConfig } from './config.ts';
import { apiBase, configSchema, validatePushoverConfig } from './config.ts';
import { buildForm, MAX_MESSAGE_LENGTH, MAX_TITLE_LENGTH, refTitle } from './message.ts';
import { answerOf, failureFor, transportFailure } from './responses.ts';
import { text } from './text.ts';

export type { PushoverConfig } from './config.ts';
export { apiBase, configSchema, KEY_PATTERN, validatePushoverConfig } from './config.ts';
export {
  buildForm,
  MAX_MESSAGE_LENGTH,
  MAX_TITLE_LENGTH,
  MAX_URL_LENGTH,
  PRIORITY,
  toPushoverHtml,
} from './message.ts';
export { DEFAULT_RETRY_AFTER_MS, failureFor, retryAfterMs } from './responses.ts';

/** Creates the target instance for one user or group key. */
export function createPushoverTarget(ctx: TargetContext<PushoverConfig>): TargetInstance {
  const cfg = ctx.config;
  const base = apiBase(cfg.api_root);
  const fatal = validatePushoverConfig(cfg).map((p) => p.path.slice(1));
  if (!base && !fatal.includes('api_root')) fatal.push('api_root');

  async function send(message: OutboundMessage, signal: AbortSignal, replyTo?: string): Promise<SendResult> {
    if (fatal.length) throw new ConfigError(text.badConfig(message.locale, fatal.join(', ')));
    let res: OutboundResponse;
    try {
      // Redirects are refused: the form carries the application token and the user key.
      res = await ctx.http.request(`${base}/1/messages.json`, {
        method: 'POST',
        body: buildForm(cfg, message, replyTo).toString(),
        signal,
        maxRedirects: 0,
        maxResponseBytes: 64 * 1024,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    } catch (err) {
      throw transportFailure(err, message.locale);
    }
    const answer = res.status >= 200 && res.status < 300 ? answerOf(res) : undefined;
    if (!answer || answer.status !== 1) throw failureFor(res, message.locale, ctx.clock.now());
    // Pushover's request id identifies the request in their support and logs.
    const request = typeof answer.request === 'string' && answer.request ? answer.request : undefined;
    const remaining = res.headers['x-limit-app-remaining'];
    return {
      remoteId: request,
      ...(remaining !== undefined ? { detail: text.remaining(message.locale, remaining) } : {}),
      messageRef: { ...(request ? { request } : {}), title: refTitle(message) },
    };
  }

  return {
    send: (message, { signal }) => send(message, signal),

    /** A sent Pushover message cannot be changed. */
    async update() {
      return NOT_SUPPORTED;
    },

    /** A new message opening with "Update to “<earlier title>”:" in the target's language. */
    async reply({ previous, message }, { signal }) {
      if (typeof previous.messageRef.title !== 'string') return NOT_SUPPORTED;
      return send(message, signal, previous.messageRef.title);
    },
  };
}

export default defineTarget({
  manifest: {
    id: 'pushover',
    kind: 'target',
    apiVersion: PLUGIN_API_VERSION,
    displayName: 'Pushover',
    description:
      'Sends notifications to the phones and desktops of a Pushover user or group, through your Pushover application.',
    locales: { en: enLocale, ru: ruLocale },
    configSchema,
    // Pushover's own limits. A longer body is cut (each message counts against the application's
    // monthly quota, so it is not split); HTML is Pushover's small subset (message.ts).
    limits: {
      maxMessageLength: MAX_MESSAGE_LENGTH,
      maxTitleLength: MAX_TITLE_LENGTH,
      overflow: 'truncate',
      formats: ['html', 'text'],
    },
  },
  validateConfig: validatePushoverConfig,
  create: (ctx) => createPushoverTarget(ctx),
});
