/**
 * @herald/target-matrix: posts notifications into a Matrix room as `m.notice` messages through
 * the client-server API (one PUT per message; see the README for why there is no SDK).
 */
import { defineTarget, errorCode, NOT_SUPPORTED, PLUGIN_API_VERSION } from '@herald/plugin-api';
import type { HealthReport, TargetContext, TargetInstance } from '@herald/plugin-api';
import { configSchema } from './config.ts';
import type { MatrixTargetConfig } from './config.ts';
import { buildContent, buildEdit, MAX_MESSAGE_LENGTH, transactionId } from './content.ts';
import { createMatrixClient } from './client.ts';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };

export { configSchema } from './config.ts';
export type { MatrixTargetConfig } from './config.ts';
export { buildContent, buildEdit, transactionId, newlinesToBreaks, cutToBytes } from './content.ts';

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
        // Without an event id (a proxy mangled the answer) the message cannot be edited later.
        return { remoteId: eventId || undefined, detail, ...(eventId ? { messageRef: { room_id, event_id: eventId } } : {}) };
      } catch (err) {
        if (errorCode(err) === 'AUTH_FAILED') health = { status: 'error', detail: (err as Error).message };
        throw err;
      }
    },
    /**
     * Edits the earlier notice with an `m.replace` event relating to it. Every edit relates to the
     * original event (the spec's rule), so the reference stays that event's. Its own transaction id
     * (from the delivery id) makes a retried edit a no-op on the homeserver.
     */
    async update({ previous, message }, { signal }) {
      const roomId = previous.messageRef.room_id;
      const eventId = previous.messageRef.event_id;
      if (roomId !== room_id || typeof eventId !== 'string' || !eventId) return NOT_SUPPORTED;
      const content = buildEdit(message, eventId);
      if (!content) return NOT_SUPPORTED;
      try {
        const editId = await client.sendMessage(room_id, transactionId(`${message.deliveryId}:edit`), content, signal);
        return { remoteId: editId || undefined, messageRef: { room_id, event_id: eventId } };
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
