/**
 * @herald/target-matrix: posts notifications into a Matrix room as `m.notice` messages through
 * the client-server API (one PUT per message; see the README for why there is no SDK).
 */
import { defineTarget, errorCode, PLUGIN_API_VERSION } from '@herald/plugin-api';
import type { HealthReport, TargetContext, TargetInstance } from '@herald/plugin-api';
import { configSchema } from './config.ts';
import type { MatrixTargetConfig } from './config.ts';
import { buildContent, MAX_MESSAGE_LENGTH, transactionId } from './content.ts';
import { createMatrixClient } from './client.ts';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };

export { configSchema } from './config.ts';
export type { MatrixTargetConfig } from './config.ts';
export { buildContent, transactionId, newlinesToBreaks, cutToBytes } from './content.ts';

/** Creates the target instance for one room. */
export function createMatrixTarget(ctx: TargetContext<MatrixTargetConfig>): TargetInstance {
  const { homeserver_url, access_token, room_id } = ctx.config;
  const client = createMatrixClient(ctx.http, homeserver_url, access_token);
  let health: HealthReport = { status: 'degraded', detail: 'not started' };

  return {
    async start() {
      try {
        const userId = await client.whoami(ctx.signal);
        health = { status: 'ok', detail: `posting as ${userId}` };
        ctx.log.info({ userId, roomId: room_id }, 'matrix target ready');
      } catch (err) {
        health = { status: errorCode(err) === 'NOT_READY' ? 'degraded' : 'error', detail: (err as Error).message };
        throw err;
      }
    },
    health: () => health,
    async send(message, { signal }) {
      const { content, plainOnly, cut } = buildContent(message);
      try {
        const eventId = await client.sendMessage(room_id, transactionId(message.deliveryId), content, signal);
        if (health.status !== 'ok') health = { status: 'ok', detail: 'last send succeeded' };
        const detail = plainOnly ? `too large for one event with its HTML copy: sent as plain text${cut ? ', cut to fit' : ''}` : undefined;
        return { remoteId: eventId || undefined, detail };
      } catch (err) {
        if (errorCode(err) === 'AUTH_FAILED') health = { status: 'error', detail: (err as Error).message };
        throw err;
      }
    },
  };
}

export default defineTarget({
  manifest: {
    id: 'matrix',
    kind: 'target',
    apiVersion: PLUGIN_API_VERSION,
    displayName: 'Matrix room',
    locales: { en: enLocale, ru: ruLocale },
    description: 'Posts notifications into a Matrix room as notices (m.notice) through the client-server API.',
    configSchema,
    // The access token travels as `Authorization: Bearer …` (always kept on its origin; declared for clarity).
    credentialHeaders: ['authorization'],
    // Synapse's default message rate for an ordinary account is 0.2/s with a burst of 10.
    limits: { maxMessageLength: MAX_MESSAGE_LENGTH, formats: ['html'], ratePerSecond: 0.2, burst: 10 },
  },
  create: (ctx) => createMatrixTarget(ctx),
});
