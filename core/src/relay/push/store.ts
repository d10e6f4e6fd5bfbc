/**
 * Web Push, the core's side: the service's VAPID key pair and the browsers each user subscribed
 * (tables of migration 0027). The `webpush` target plugin reaches them through
 * `TargetContext.webPush` (`webPushAccess` below), never by SQL of its own.
 *
 * The key pair is made once, on first need, by whichever replica needs it first: every replica
 * inserts its candidate with ON CONFLICT DO NOTHING and then uses the row that is there, so all
 * replicas sign with the same key. Its private key and every subscription's auth secret are
 * stored sealed (`SecretsAtRest`) and join the log masker when opened.
 */
import crypto from 'node:crypto';
import type { Queryable } from '../../db/database.ts';
import type { WebPushAccess, WebPushSubscription } from '../../plugin-api/index.ts';
import type { SecretsAtRest } from '../../secrets/at-rest.ts';

/** The target kind whose plugin delivers Web Push. */
export const WEBPUSH_KIND = 'webpush';
/** Browsers one user may subscribe. */
export const MAX_SUBSCRIPTIONS_PER_USER = 20;
/** The VAPID `sub` claim when the public URL is not https (a reserved domain: no mail reaches it). */
export const FALLBACK_SUBJECT = 'mailto:webpush@herald.invalid';

export interface PushDeps {
  db: Queryable & { tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> };
  atRest: SecretsAtRest;
  clock: { now(): Date };
  /** The web client's public URL ('' when unknown: links are then relative to the service worker's origin). */
  publicUrl: () => string;
  /** Adds a clear secret to the log masker. */
  mask?: (value: string) => void;
}

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/**
 * A fresh P-256 key pair as VAPID wants it: the 65-byte uncompressed public point and the 32-byte private scalar,
 * base64url.
 */
export function generateVapidKeys(): VapidKeys {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  const priv = ecdh.getPrivateKey();
  return {
    publicKey: ecdh.getPublicKey().toString('base64url'),
    privateKey: Buffer.concat([Buffer.alloc(32 - priv.length), priv]).toString('base64url'),
  };
}

/** The `sub` claim: the public URL's origin when it is https, else a mailto: address under a reserved domain. */
export function vapidSubject(publicUrl: string): string {
  try {
    const u = new URL(publicUrl);
    if (u.protocol === 'https:') return u.origin;
  } catch {
    /* no public URL */
  }
  return FALLBACK_SUBJECT;
}

/** The web client's page of an event: the event log opened on it. */
export function eventUrl(publicUrl: string, eventId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/#/events?event=${encodeURIComponent(eventId)}`;
}

/** The account page, where a test notification leads. */
export const accountUrl = (publicUrl: string): string => `${publicUrl.replace(/\/+$/, '')}/#/account`;

const keyCache = new WeakMap<object, Promise<VapidKeys>>();

/**
 * The VAPID key pair, made and stored on first need. Opened once per database handle and kept in
 * memory (the row never changes once written); a failure is not cached.
 */
export function vapidKeys(deps: PushDeps): Promise<VapidKeys> {
  let p = keyCache.get(deps.db);
  if (!p) {
    p = loadVapid(deps);
    keyCache.set(deps.db, p);
    p.catch(() => {
      if (keyCache.get(deps.db) === p) keyCache.delete(deps.db);
    });
  }
  return p.then((k) => {
    deps.mask?.(k.privateKey);
    return k;
  });
}

/** The public key alone (what a browser subscribes with). */
export async function vapidPublicKey(deps: PushDeps): Promise<string> {
  return (await vapidKeys(deps)).publicKey;
}

async function loadVapid(deps: PushDeps): Promise<VapidKeys> {
  let row = await deps.db.get<{ public_key: string; private_key: string }>(
    'SELECT public_key, private_key FROM webpush_vapid WHERE id = 1',
  );
  if (!row) {
    const fresh = generateVapidKeys();
    await deps.db.run(
      'INSERT INTO webpush_vapid (id, public_key, private_key, created_at) VALUES (1, ?, ?, ?) ON CONFLICT ' +
        '(id) DO NOTHING',
      [fresh.publicKey, deps.atRest.seal(fresh.privateKey), deps.clock.now().toISOString()],
    );
    row = await deps.db.get<{ public_key: string; private_key: string }>(
      'SELECT public_key, private_key FROM webpush_vapid WHERE id = 1',
    );
    if (!row) throw new Error('the VAPID key pair could not be stored');
  }
  return {
    publicKey: row.public_key,
    privateKey: deps.atRest.open(row.private_key, 'the VAPID private key of Web Push'),
  };
}

export interface SubscriptionRow {
  id: string;
  user_id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  label: string;
  created_at: string;
  last_success_at: string | null;
}

/** The subscriptions of one user, oldest first. */
export function userSubscriptions(db: Queryable, userId: string): Promise<SubscriptionRow[]> {
  return db.all<SubscriptionRow>('SELECT * FROM webpush_subscriptions WHERE user_id = ? ORDER BY created_at, id', [
    userId,
  ]);
}

/**
 * `TargetContext.webPush` for an instance owned by `userId`; `only` limits it to one of the
 * user's subscriptions (a test sent to one browser), and `link` replaces the event link.
 */
export function webPushAccess(deps: PushDeps, userId: string, o: { only?: string; link?: string } = {}): WebPushAccess {
  return {
    async vapid() {
      const k = await vapidKeys(deps);
      return { ...k, subject: vapidSubject(deps.publicUrl()) };
    },
    async subscriptions(): Promise<WebPushSubscription[]> {
      const rows = (await userSubscriptions(deps.db, userId)).filter((r) => !o.only || r.id === o.only);
      return rows.map((r) => {
        const auth = deps.atRest.open(r.auth, 'the auth secret of a browser subscription');
        deps.mask?.(auth);
        return { id: r.id, endpoint: r.endpoint, keys: { p256dh: r.p256dh, auth } };
      });
    },
    async remove(id) {
      await deps.db.run('DELETE FROM webpush_subscriptions WHERE id = ? AND user_id = ?', [id, userId]);
    },
    async markSuccess(id) {
      await deps.db.run('UPDATE webpush_subscriptions SET last_success_at = ? WHERE id = ? AND user_id = ?', [
        deps.clock.now().toISOString(),
        id,
        userId,
      ]);
    },
    eventUrl: (eventId) => o.link ?? eventUrl(deps.publicUrl(), eventId),
  };
}

/**
 * Boot step: seals again with the current SERVICE_SECRET_KEY what the previous key sealed (after
 * a rotation) and seals anything stored in clear, each row compare-and-set. Values no key opens
 * are left alone (their sends fail with a readable message). Returns how many were written.
 */
export async function resealWebPushSecrets(deps: PushDeps): Promise<number> {
  return deps.db.tx(async (q) => {
    let n = 0;
    const fix = (v: string) => {
      const state = deps.atRest.state(v);
      if (state === 'clear') return deps.atRest.seal(v);
      if (state === 'previous') return deps.atRest.reseal(v);
      return v;
    };
    const vapid = await q.get<{ private_key: string }>('SELECT private_key FROM webpush_vapid WHERE id = 1');
    if (vapid) {
      const next = fix(vapid.private_key);
      if (next !== vapid.private_key)
        n += await q.run('UPDATE webpush_vapid SET private_key = ? WHERE id = 1 AND private_key = ?', [
          next,
          vapid.private_key,
        ]);
    }
    for (const r of await q.all<{ id: string; auth: string }>(
      'SELECT id, auth FROM webpush_subscriptions ORDER BY id',
    )) {
      const next = fix(r.auth);
      if (next !== r.auth)
        n += await q.run('UPDATE webpush_subscriptions SET auth = ? WHERE id = ? AND auth = ?', [next, r.id, r.auth]);
    }
    return n;
  });
}
