/**
 * @herald/target-matrix: posts notifications into a Matrix room as `m.notice` messages through
 * the client-server API: one PUT per message in a plain room; in a room with `m.room.encryption`
 * the notice is encrypted first by matrix-js-sdk's Rust crypto with a device of the target's own
 * (see e2ee.ts, loaded only then).
 */

import type { HealthReport, TargetContext, TargetInstance } from '@herald/plugin-api';
import {
  ConfigError,
  defineTarget,
  errorCode,
  NOT_SUPPORTED,
  PermanentSendError,
  PLUGIN_API_VERSION,
  RetryableSendError,
} from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import type { Whoami } from './client.ts';
import { createMatrixClient } from './client.ts';
import type { MatrixTargetConfig } from './config.ts';
import { configSchema } from './config.ts';
import type { NoticeContent } from './content.ts';
import {
  buildContent,
  buildEdit,
  MAX_CONTENT_BYTES,
  MAX_ENCRYPTED_CONTENT_BYTES,
  MAX_MESSAGE_LENGTH,
  transactionId,
} from './content.ts';
import type { EncryptedRoom } from './e2ee.ts';

export type { MatrixTargetConfig } from './config.ts';
export { configSchema } from './config.ts';
export { buildContent, buildEdit, cutToBytes, newlinesToBreaks, transactionId } from './content.ts';

/**
 * How long a plain room's answer to "is it encrypted?" is trusted before a send asks again. A room's
 * encryption can be turned on at any time (and never off), so a plain room is checked now and then.
 */
export const ENCRYPTION_RECHECK_MS = 10 * 60_000;

/** A lifecycle error met while sending, as the send error it means. */
function asSendError(err: unknown): unknown {
  const code = errorCode(err);
  if (code === 'NOT_READY') return new RetryableSendError((err as Error).message, 0, { cause: err });
  if (code === 'CONFIG') return new PermanentSendError((err as Error).message, 0, { cause: err });
  return err;
}

/** Creates the target instance for one room. */
export function createMatrixTarget(ctx: TargetContext<MatrixTargetConfig>): TargetInstance {
  const { homeserver_url, access_token, room_id } = ctx.config;
  const client = createMatrixClient(ctx.http, homeserver_url, access_token);
  let health: HealthReport = { status: 'degraded', detail: 'not started' };
  let who: Whoami | undefined;
  /** The last answer to "is the room encrypted?" (ms of the instance clock). */
  let checked: { at: number; encrypted: boolean } | undefined;
  let encryption: Promise<EncryptedRoom> | undefined;
  let encrypted: EncryptedRoom | undefined;

  const describe = (userId: string) =>
    encrypted
      ? `posting as ${userId} into an encrypted room (device ${encrypted.deviceId}, Ed25519 key ${encrypted.ed25519})`
      : `posting as ${userId}`;

  /**
   * Starts the encrypted side once (matrix-js-sdk is imported here); a failed start is tried again on the next call.
   * Throws lifecycle errors.
   */
  function encryptedRoom(): Promise<EncryptedRoom> {
    encryption ??= (async () => {
      who ??= await client.whoami(ctx.signal);
      if (!who.deviceId)
        throw new ConfigError(
          'the homeserver did not name the device of this access token, and an encrypted room needs one',
        );
      const { startEncryptedRoom } = await import('./e2ee.ts');
      const room = await startEncryptedRoom({
        ctx,
        direct: client,
        homeserverUrl: homeserver_url,
        accessToken: access_token,
        userId: who.userId,
        deviceId: who.deviceId,
        roomId: room_id,
      });
      encrypted = room;
      ctx.log.info(
        { userId: who.userId, roomId: room_id, deviceId: room.deviceId, ed25519: room.ed25519 },
        "matrix target: the room is encrypted; posting with the target's own device",
      );
      return room;
    })();
    encryption.catch(() => {
      encryption = undefined;
    });
    return encryption;
  }

  /** How this send goes: in the clear, or encrypted. Throws send errors. */
  async function route(signal: AbortSignal): Promise<EncryptedRoom | undefined> {
    // A room's encryption is never turned off: once encrypted, always.
    if (encrypted) return encrypted;
    const now = ctx.clock.now().getTime();
    if (!checked || now - checked.at >= ENCRYPTION_RECHECK_MS || now < checked.at) {
      checked = { at: now, encrypted: (await client.roomEncryption(room_id, signal)) !== undefined };
    }
    if (!checked.encrypted) return undefined;
    try {
      return await encryptedRoom();
    } catch (err) {
      throw asSendError(err);
    }
  }

  /** Sends `content` (or its encryption) with the transaction id `txnId`: the event id. */
  async function post(
    room: EncryptedRoom | undefined,
    txnId: string,
    content: NoticeContent,
    signal: AbortSignal,
  ): Promise<string> {
    if (!room) return client.sendMessage(room_id, txnId, content, signal);
    const sealed = await room.encrypt(room_id, txnId, content, signal);
    return client.sendMessage(room_id, txnId, sealed.content, signal, sealed.type);
  }

  const failed = (err: unknown) => {
    if (errorCode(err) === 'AUTH_FAILED') health = { status: 'error', detail: (err as Error).message };
    return err;
  };

  return {
    async start() {
      try {
        who = await client.whoami(ctx.signal);
        try {
          checked = {
            at: ctx.clock.now().getTime(),
            encrypted: (await client.roomEncryption(room_id, ctx.signal)) !== undefined,
          };
        } catch (err) {
          // Not in the room yet, or the homeserver hiccuped: the first send asks again and says why.
          ctx.log.warn(
            { roomId: room_id, err: (err as Error).message },
            "matrix target: could not read the room's encryption state",
          );
        }
        if (checked?.encrypted) await encryptedRoom();
        health = { status: 'ok', detail: describe(who.userId) };
        ctx.log.info({ userId: who.userId, roomId: room_id }, 'matrix target ready');
      } catch (err) {
        health = { status: errorCode(err) === 'NOT_READY' ? 'degraded' : 'error', detail: (err as Error).message };
        throw err;
      }
    },
    stop() {
      encrypted?.stop();
      void encryption?.then(
        (r) => r.stop(),
        () => {},
      );
    },
    health: () => health,
    async send(message, { signal }) {
      try {
        const room = await route(signal);
        const { content, plainOnly, cut } = buildContent(
          message,
          room ? MAX_ENCRYPTED_CONTENT_BYTES : MAX_CONTENT_BYTES,
        );
        const eventId = await post(room, transactionId(message.deliveryId), content, signal);
        if (health.status !== 'ok') health = { status: 'ok', detail: 'last send succeeded' };
        const detail = plainOnly
          ? `too large for one event with its HTML copy: sent as plain text${cut ? ', cut to fit' : ''}`
          : undefined;
        // Without an event id (a proxy mangled the answer) the message cannot be edited later.
        return {
          remoteId: eventId || undefined,
          detail,
          ...(eventId ? { messageRef: { room_id, event_id: eventId } } : {}),
        };
      } catch (err) {
        throw failed(err);
      }
    },
    /**
     * Edits the earlier notice with an `m.replace` event relating to it. Every edit relates to the
     * original event (the spec's rule), so the reference stays that event's. Its own transaction id
     * (from the delivery id) makes a retried edit a no-op on the homeserver. In an encrypted room the
     * edit is encrypted like the notice, its `m.relates_to` left in the clear as the spec requires.
     */
    async update({ previous, message }, { signal }) {
      const roomId = previous.messageRef.room_id;
      const eventId = previous.messageRef.event_id;
      if (roomId !== room_id || typeof eventId !== 'string' || !eventId) return NOT_SUPPORTED;
      try {
        const room = await route(signal);
        const content = buildEdit(message, eventId, room ? MAX_ENCRYPTED_CONTENT_BYTES : MAX_CONTENT_BYTES);
        if (!content) return NOT_SUPPORTED;
        const editId = await post(room, transactionId(`${message.deliveryId}:edit`), content, signal);
        return { remoteId: editId || undefined, messageRef: { room_id, event_id: eventId } };
      } catch (err) {
        throw failed(err);
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
    description:
      'Posts notifications into a Matrix room as notices (m.notice) through the client-server API; in an ' +
      'encrypted room, end-to-end encrypted with a device of its own.',
    configSchema,
    // The access token travels as `Authorization: Bearer …` (always kept on its origin; declared for clarity).
    credentialHeaders: ['authorization'],
    // Synapse's default message rate for an ordinary account is 0.2/s with a burst of 10.
    limits: { maxMessageLength: MAX_MESSAGE_LENGTH, formats: ['html'], ratePerSecond: 0.2, burst: 10 },
  },
  create: (ctx) => createMatrixTarget(ctx),
});
