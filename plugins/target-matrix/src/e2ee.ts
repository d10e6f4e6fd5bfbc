/**
 * End-to-end encryption for a room that has `m.room.encryption`: matrix-js-sdk with its Rust crypto
 * keeps a device of the target's own (the device of its access token), follows the room through a
 * narrow /sync (members, encryption state, to-device messages, device-list changes, one-time key
 * counts), shares the Megolm room key with the members' devices over Olm, and encrypts each notice
 * into an `m.room.encrypted` event that the target then PUTs itself, with its own transaction id.
 *
 * matrix-js-sdk is imported here only, on the first start of an instance whose room is encrypted,
 * so the service and plain-room targets never load it (nor its WebAssembly crypto).
 *
 * The device identity survives restarts through the instance store (see pickle.ts). Every HTTP call
 * of the sdk goes through `ctx.http.fetch`, the service's SSRF-safe client.
 */

import type { PluginLogger, TargetContext } from '@herald/plugin-api';
import {
  AuthFailedError,
  ConfigError,
  NotReadyError,
  PermanentSendError,
  RetryableSendError,
} from '@herald/plugin-api';
import type { Room, MatrixClient as SdkClient, MatrixEvent as SdkEvent } from 'matrix-js-sdk';
import type { MatrixClient } from './client.ts';
import { sendFailure } from './client.ts';
import type { DeviceIdentity } from './pickle.ts';
import {
  IDENTITY_KEY,
  libolmAccountPickle,
  newIdentity,
  publicKeys,
  randomPickleKey,
  SEALED,
  uploadedKeyIds,
} from './pickle.ts';

/** How long a long-polling /sync waits on the homeserver. */
export const SYNC_POLL_MS = 30_000;
/** How long start waits for the first /sync (the sdk keeps trying after that; start then reports not ready). */
export const FIRST_SYNC_MS = 30_000;
/** How long a send waits for the first /sync when the sdk has not finished it yet. */
const SEND_WAIT_MS = 10_000;

/**
 * The state types the narrow sync needs in the timeline: who is in the room, its encryption, its history visibility.
 */
const STATE_TYPES = ['m.room.create', 'm.room.member', 'm.room.encryption', 'm.room.history_visibility'];

export interface EncryptedRoom {
  readonly deviceId: string;
  /** The device's Ed25519 identity key (its fingerprint), unpadded base64. */
  readonly ed25519: string;
  /** Encrypts an `m.room.message` content for `roomId`: the `m.room.encrypted` content to send. Throws send errors. */
  encrypt(
    roomId: string,
    txnId: string,
    content: object,
    signal: AbortSignal,
  ): Promise<{ type: string; content: object }>;
  stop(): void;
}

type Sdk = typeof import('matrix-js-sdk');
let sdkModule: Promise<Sdk> | undefined;

/**
 * The sdk, imported once per process on first use. Its module-wide logger writes to the console at
 * debug level (room state, member loading); each client here has a logger of its own on the
 * instance's log, so the module-wide one is muted (child loggers copy its output factory).
 */
export const loadSdk = (): Promise<Sdk> =>
  (sdkModule ??= (async () => {
    const [sdk, { logger }] = await Promise.all([import('matrix-js-sdk'), import('matrix-js-sdk/lib/logger.js')]);
    const root = logger as unknown as { methodFactory: unknown; rebuild(): void };
    root.methodFactory = () => () => {};
    root.rebuild();
    return sdk;
  })());

/** The sdk's logger on the instance's: its chatter at debug, its errors as warnings. */
function sdkLogger(log: PluginLogger, prefix = 'matrix-js-sdk') {
  const text = (args: unknown[]) =>
    args
      .map((a) =>
        a instanceof Error
          ? a.message
          : typeof a === 'string'
            ? a
            : (() => {
                try {
                  return JSON.stringify(a);
                } catch {
                  return String(a);
                }
              })(),
      )
      .join(' ')
      .slice(0, 2_000);
  const logger = {
    trace: () => {},
    debug: () => {},
    info: (...a: unknown[]) => log.debug({ sdk: prefix }, text(a)),
    warn: (...a: unknown[]) => log.debug({ sdk: prefix }, text(a)),
    error: (...a: unknown[]) => log.warn({ sdk: prefix }, text(a)),
    getChild: (ns: string) => sdkLogger(log, `${prefix} ${ns}`),
  };
  return logger;
}

/** The error to throw for a failure of the sdk while it prepares an encrypted send. */
function sdkFailure(err: unknown, what: string): Error {
  const e = err as {
    httpStatus?: number;
    errcode?: string;
    data?: { error?: unknown; retry_after_ms?: unknown };
    httpHeaders?: Headers;
    message?: string;
  };
  if (typeof e?.httpStatus === 'number') {
    const header = Number(e.httpHeaders?.get?.('retry-after'));
    const retryAfterMs =
      typeof e.data?.retry_after_ms === 'number'
        ? e.data.retry_after_ms
        : Number.isFinite(header) && header >= 0
          ? header * 1000
          : undefined;
    const failure = sendFailure({
      status: e.httpStatus,
      errcode: e.errcode,
      error: typeof e.data?.error === 'string' ? e.data.error : (e.message ?? `HTTP ${e.httpStatus}`),
      retryAfterMs,
    });
    failure.message = `${what}: ${failure.message}`;
    return failure;
  }
  return new RetryableSendError(`${what}: ${e?.message ?? String(err)}`, 0, { cause: err });
}

/**
 * The device identity to run with: the stored one when it belongs to this user and device, else a
 * new one. Refuses (ConfigError) when the homeserver already holds other keys for the device: two
 * sets of keys on one device would make members' clients distrust it.
 */
async function identityFor(
  ctx: TargetContext<unknown>,
  direct: MatrixClient,
  userId: string,
  deviceId: string,
): Promise<DeviceIdentity> {
  const stored = await ctx.store.get<DeviceIdentity>(IDENTITY_KEY);
  const mine = stored && stored.userId === userId && stored.deviceId === deviceId ? stored : undefined;
  const identity = mine ?? newIdentity(userId, deviceId);
  const published = await direct.deviceKeys(userId, deviceId, ctx.signal);
  const publishedEd = published?.[`ed25519:${deviceId}`];
  if (publishedEd !== undefined && publishedEd !== publicKeys(identity).ed25519) {
    throw new ConfigError(
      mine
        ? `the homeserver holds other encryption keys for device ${deviceId} than this target does (another client ` +
            'replaced them); give this target an access token of its own (log in once more) so it gets a device of ' +
            'its own'
        : `device ${deviceId} of this access token already has encryption keys that this target does not hold ` +
            '(another client, or another Herald target with the same token, uses the device); give this target an ' +
            'access token of its own (log in once more) so it gets a device of its own',
    );
  }
  if (!mine && stored)
    ctx.log.info(
      { deviceId, previousDeviceId: stored.deviceId },
      'matrix target: the access token belongs to another device now; new device keys',
    );
  // Written at every start, sealed: a new identity, and one an earlier version stored in the clear.
  await ctx.store.set(IDENTITY_KEY, identity, SEALED);
  return identity;
}

export async function startEncryptedRoom(o: {
  ctx: TargetContext<unknown>;
  direct: MatrixClient;
  homeserverUrl: string;
  accessToken: string;
  userId: string;
  deviceId: string;
  roomId: string;
}): Promise<EncryptedRoom> {
  const { ctx, direct, userId, deviceId, roomId } = o;
  const identity = await identityFor(ctx, direct, userId, deviceId);
  const sdk = await loadSdk();
  const keys = publicKeys(identity);

  // The sdk's documented path from a libolm account: a legacy crypto store holding its pickle. The
  // migration's last step would query our own keys in a loop with no pause until it succeeds;
  // marking that step done skips it (there are no cross-signing keys to check).
  class AccountStore extends sdk.MemoryCryptoStore {
    override async setMigrationState(state: number): Promise<void> {
      // 3 = MEGOLM_SESSIONS_MIGRATED, 5 = INITIAL_OWN_KEY_QUERY_DONE (matrix-js-sdk MigrationState).
      return super.setMigrationState(state >= 3 ? 5 : state);
    }
  }
  const pickleKey = randomPickleKey();
  const accountStore = new AccountStore();
  accountStore.storeAccount(null, libolmAccountPickle(identity, new TextEncoder().encode(pickleKey)));

  // Settled by the first accepted upload of the device keys (the Rust crypto uploads them at every start).
  let published!: () => void;
  const devicePublished = new Promise<void>((resolve) => {
    published = resolve;
  });
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    let upload: { device_keys?: unknown } | undefined;
    if (
      (init?.method ?? 'GET').toUpperCase() === 'POST' &&
      url.pathname.endsWith('/keys/upload') &&
      typeof init?.body === 'string'
    ) {
      upload = JSON.parse(init.body) as { device_keys?: unknown };
      // One-time key ids stay taken on the homeserver: remember the highest before it can be published.
      const next = Math.max(identity.nextKeyId, ...uploadedKeyIds(upload).map((id) => id + 1));
      if (next > identity.nextKeyId) {
        identity.nextKeyId = next;
        await ctx.store.set(IDENTITY_KEY, identity, SEALED);
      }
    }
    const timeoutMs = url.pathname.endsWith('/sync') ? SYNC_POLL_MS + 20_000 : 20_000;
    const res = await ctx.http.fetch(input, { ...init, timeoutMs } as RequestInit);
    if (upload?.device_keys && res.ok) published();
    return res;
  }) as typeof fetch;

  const client: SdkClient = new sdk.MatrixClient({
    baseUrl: o.homeserverUrl.replace(/\/+$/, ''),
    accessToken: o.accessToken,
    userId,
    deviceId,
    fetchFn,
    store: new sdk.MemoryStore(),
    cryptoStore: accountStore,
    pickleKey,
    logger: sdkLogger(ctx.log),
    timelineSupport: false,
  });
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    client.stopClient();
  };
  ctx.signal.addEventListener('abort', stop, { once: true });

  try {
    await client.initRustCrypto({ useIndexedDB: false });
    const crypto = client.getCrypto()!;
    const own = await crypto.getOwnDeviceKeys();
    if (own.ed25519 !== keys.ed25519 || own.curve25519 !== keys.curve25519)
      throw new Error('the Rust crypto did not take the stored device keys');
    // No cross-signing here: the room key goes to every device of the members, verified or not.
    crypto.globalBlacklistUnverifiedDevices = false;
    if (typeof (crypto as unknown as { encryptEvent?: unknown }).encryptEvent !== 'function')
      throw new Error('this matrix-js-sdk has no encryptEvent in its crypto backend');

    const filter = new sdk.Filter(userId);
    filter.setDefinition({
      room: {
        rooms: [roomId],
        timeline: { limit: 20, types: STATE_TYPES },
        state: { lazy_load_members: true },
        ephemeral: { types: [] },
        account_data: { types: [] },
      },
      presence: { types: [] },
      account_data: { types: [] },
    });
    await client.startClient({
      filter,
      initialSyncLimit: 20,
      lazyLoadMembers: true,
      disablePresence: true,
      pollTimeout: SYNC_POLL_MS,
      threadSupport: false,
    });
    await firstSync(sdk, client, FIRST_SYNC_MS, ctx.signal);
    // Ready once members' clients can find the device: its keys are on the homeserver.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new NotReadyError(
              `the homeserver did not accept the device keys within ${Math.round(FIRST_SYNC_MS / 1000)} s`,
            ),
          ),
        FIRST_SYNC_MS,
      );
    });
    try {
      await raceAbort(Promise.race([devicePublished, late]), ctx.signal);
    } finally {
      clearTimeout(timer);
    }
  } catch (err) {
    stop();
    ctx.signal.removeEventListener('abort', stop);
    if (err instanceof ConfigError || err instanceof NotReadyError || err instanceof AuthFailedError) throw err;
    throw new NotReadyError(`Matrix encryption could not start: ${(err as Error).message}`, { cause: err });
  }

  const backend = client.getCrypto() as unknown as { encryptEvent(event: SdkEvent, room: Room): Promise<void> };
  return {
    deviceId,
    ed25519: keys.ed25519,
    async encrypt(room, txnId, content, signal) {
      if (stopped) throw new RetryableSendError('the Matrix target is stopping', 0);
      const state = client.getSyncState();
      if (state !== 'PREPARED' && state !== 'SYNCING' && state !== 'CATCHUP') {
        try {
          await firstSync(sdk, client, SEND_WAIT_MS, signal);
        } catch (err) {
          throw new RetryableSendError(`the encrypted room is not loaded yet: ${(err as Error).message}`, 0, {
            cause: err,
          });
        }
      }
      const r = client.getRoom(room);
      if (!r)
        throw new PermanentSendError(`the account has not joined ${room} (or has left it); invite it and join`, 0);
      if (!(await client.getCrypto()!.isEncryptionEnabledInRoom(room))) {
        const algorithm = r.currentState.getStateEvents('m.room.encryption', '')?.getContent().algorithm;
        if (r.hasEncryptionStateEvent())
          throw new PermanentSendError(
            `the room uses an encryption algorithm this target does not support (${String(algorithm)})`,
            0,
          );
        throw new RetryableSendError("the room's encryption state has not arrived through sync yet", 0);
      }
      const event = new sdk.MatrixEvent({
        type: 'm.room.message',
        content: content as Record<string, unknown>,
        room_id: room,
        sender: userId,
        event_id: `~${room}:${txnId}`,
        origin_server_ts: Date.now(),
      });
      try {
        await raceAbort(backend.encryptEvent(event, r), signal);
      } catch (err) {
        if (signal.aborted) throw err;
        throw sdkFailure(err, "sharing the room key with the members' devices failed");
      }
      return { type: event.getWireType(), content: event.getWireContent() };
    },
    stop,
  };
}

/** Resolves once the client has finished its first sync; rejects on a sync error, timeout or abort. */
function firstSync(sdk: Sdk, client: SdkClient, ms: number, signal: AbortSignal): Promise<void> {
  const ready = () => ['PREPARED', 'SYNCING', 'CATCHUP'].includes(client.getSyncState() ?? '');
  if (ready()) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      client.off(sdk.ClientEvent.Sync, onSync);
      client.off(sdk.HttpApiEvent.SessionLoggedOut, onLoggedOut);
      signal.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve();
    };
    const onSync = (state: string, _prev: string | null, data?: { error?: Error }) => {
      if (ready()) done();
      else if (state === 'ERROR') done(sdkFailureForStart(data?.error));
    };
    const onLoggedOut = (err: { httpStatus?: number; errcode?: string }) =>
      done(
        new AuthFailedError(
          `homeserver answered ${err.httpStatus ?? 401} ${err.errcode ?? ''}: the access token was rejected ` +
            '(logged out or revoked)',
          { statusCode: err.httpStatus ?? 401 },
        ),
      );
    const onAbort = () => done(new NotReadyError('stopped before the first sync'));
    const timer = setTimeout(() => done(new NotReadyError(`no answer to /sync within ${Math.round(ms / 1000)} s`)), ms);
    client.on(sdk.ClientEvent.Sync, onSync);
    client.on(sdk.HttpApiEvent.SessionLoggedOut, onLoggedOut);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function sdkFailureForStart(err: unknown): Error {
  const e = err as { httpStatus?: number; errcode?: string; message?: string } | undefined;
  if (e?.httpStatus === 401 || e?.errcode === 'M_UNKNOWN_TOKEN')
    return new AuthFailedError(
      `homeserver answered ${e.httpStatus ?? 401} ${e.errcode ?? ''}: the access token was rejected (logged out ` +
        'or revoked)',
      { statusCode: 401 },
    );
  return new NotReadyError(`the first /sync failed: ${e?.message ?? 'unknown error'}`, { cause: err });
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
