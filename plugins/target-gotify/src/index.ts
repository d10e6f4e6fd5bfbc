/**
 * @herald/target-gotify: sends notifications to a self-hosted Gotify server as messages of one
 * Gotify application (`POST /message` with the application token in `X-Gotify-Key`).
 */

import type { OutboundMessage, OutboundResponse, SendResult, TargetContext, TargetInstance } from '@herald/plugin-api';
import { ConfigError, defineTarget, NOT_SUPPORTED, PLUGIN_API_VERSION } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import type { GotifyConfig } from './config.ts';
import { configSchema, serverBase, validateGotifyConfig } from './config.ts';
import { buildMessage, MAX_MESSAGE_LENGTH, refTitle } from './message.ts';
import { failureFor, transportFailure } from './responses.ts';
import { text } from './text.ts';

export type { GotifyConfig } from './config.ts';
export { configSchema, serverBase, validateGotifyConfig } from './config.ts';
export { buildMessage, MAX_MESSAGE_LENGTH, PRIORITY } from './message.ts';
export { DEFAULT_RETRY_AFTER_MS, failureFor } from './responses.ts';

/**
 * The header Gotify reads an application token from (it also takes `?token=`, which would put the token into URLs and
 * logs).
 */
export const TOKEN_HEADER = 'x-gotify-key';

/** Creates the target instance for one Gotify application. */
export function createGotifyTarget(ctx: TargetContext<GotifyConfig>): TargetInstance {
  const cfg = ctx.config;
  const base = serverBase(cfg.server_url);
  const fatal = validateGotifyConfig(cfg).map((p) => p.path.slice(1));
  if (!base && !fatal.includes('server_url')) fatal.unshift('server_url');

  async function send(message: OutboundMessage, signal: AbortSignal, replyTo?: string): Promise<SendResult> {
    if (fatal.length) throw new ConfigError(text.badConfig(message.locale, [...new Set(fatal)].join(', ')));
    let res: OutboundResponse;
    try {
      // Redirects are refused: following one would send the message (and, to the same origin, the token) elsewhere.
      res = await ctx.http.request(`${base}/message`, {
        method: 'POST',
        json: buildMessage(message, replyTo),
        signal,
        maxRedirects: 0,
        maxResponseBytes: 256 * 1024,
        headers: { [TOKEN_HEADER]: cfg.app_token },
      });
    } catch (err) {
      throw transportFailure(err, message.locale);
    }
    if (res.status < 200 || res.status >= 300) throw failureFor(res, message.locale, ctx.clock.now());
    let id: string | undefined;
    try {
      const v = res.json<{ id?: unknown }>().id;
      if (typeof v === 'number' || (typeof v === 'string' && v)) id = String(v);
    } catch {
      /* delivered all the same */
    }
    return { remoteId: id, messageRef: { server: base!, ...(id ? { id } : {}), title: refTitle(message) } };
  }

  return {
    send: (message, { signal }) => send(message, signal),

    /** Gotify's API cannot edit a message (it can only delete one, with a client token). */
    async update() {
      return NOT_SUPPORTED;
    },

    /**
     * A new message opening with "Update to “<earlier title>”:" in the target's language. Not for a message on another
     * server.
     */
    async reply({ previous, message }, { signal }) {
      const ref = previous.messageRef;
      if (ref.server !== base || typeof ref.title !== 'string') return NOT_SUPPORTED;
      return send(message, signal, ref.title);
    },
  };
}

export default defineTarget({
  manifest: {
    id: 'gotify',
    kind: 'target',
    apiVersion: PLUGIN_API_VERSION,
    displayName: 'Gotify',
    description: 'Sends notifications to a self-hosted Gotify server as messages of one of its applications.',
    locales: { en: enLocale, ru: ruLocale },
    configSchema,
    credentialHeaders: [TOKEN_HEADER],
    // Gotify has no length limit of its own; 20,000 characters keep a message within a MySQL TEXT
    // column and far beyond what a notification shows. Longer bodies are cut (a push notification
    // rarely needs more); a title is cut at 250.
    limits: {
      maxMessageLength: MAX_MESSAGE_LENGTH,
      maxTitleLength: 250,
      overflow: 'truncate',
      formats: ['markdown', 'text'],
    },
  },
  validateConfig: validateGotifyConfig,
  create: (ctx) => createGotifyTarget(ctx),
});
