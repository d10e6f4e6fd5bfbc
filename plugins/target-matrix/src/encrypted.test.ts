/**
 * Encrypted rooms: Herald's target (matrix-js-sdk with Rust crypto, its device kept in the instance
 * store) posts into a room with `m.room.encryption`, and a second matrix-js-sdk client (the reader,
 * with Rust crypto of its own, joined to the room) syncs from the same loopback fake homeserver and
 * decrypts what it reads.
 */

import type { OutboundHttp } from '@herald/plugin-api';
import { errorCode } from '@herald/plugin-api';
import { createTestHost, createTestHttp } from '@herald/plugin-api/testing';
import type { MatrixClient, MatrixEvent } from 'matrix-js-sdk';
import t from 'tap';
import { FakeHomeserver } from '../test/fakes/matrix.ts';
import { loadSdk } from './e2ee.ts';
import plugin, { ENCRYPTION_RECHECK_MS, transactionId } from './index.ts';
import type { DeviceIdentity } from './pickle.ts';
import { IDENTITY_KEY } from './pickle.ts';

// matrix-js-sdk arms a timer for every /sync it makes (its poll timeout plus 80 s) and never clears
// it; the timers do nothing once the clients stop, but would hold this test process open for minutes.
const armTimer = globalThis.setTimeout;
globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
  const timer = armTimer(fn, ms, ...args);
  if ((ms ?? 0) >= 60_000) timer.unref();
  return timer;
}) as typeof setTimeout;

const ROOM = '!vault:example.org';
const BOT = '@herald:example.org';
const TOKEN = 'syt_aGVyYWxk_SeCrEtToKeN_e2ee01';
const READER = '@reader:example.org';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits for `check` to return something, polling every 20 ms for at most `ms`. */
async function until<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 10_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
const caught = (p: unknown) =>
  Promise.resolve(p).then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as any,
  );

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, getChild: () => quiet };

/** A reading client: logs in with its password, runs Rust crypto and syncs until stopped. */
async function startReader(tt: any, hs: FakeHomeserver) {
  const sdk = await loadSdk();
  const res = await fetch(`${hs.url}/_matrix/client/v3/login`, {
    method: 'POST',
    body: JSON.stringify({
      type: 'm.login.password',
      identifier: { type: 'm.id.user', user: 'reader' },
      password: 'reader-pw',
    }),
  });
  const login = (await res.json()) as { user_id: string; access_token: string; device_id: string };
  const client: MatrixClient = sdk.createClient({
    baseUrl: hs.url,
    accessToken: login.access_token,
    userId: login.user_id,
    deviceId: login.device_id,
    logger: quiet as never,
  });
  await client.initRustCrypto({ useIndexedDB: false });
  await client.startClient({ initialSyncLimit: 20 });
  tt.teardown(() => client.stopClient());
  await until('the reader to publish its device keys', () => hs.deviceKeys.get(READER)?.has(login.device_id));
  return {
    client,
    deviceId: login.device_id,
    /** The event `eventId` once the reader has it and could decrypt it. */
    decrypted: (eventId: string) =>
      until(`the reader to decrypt ${eventId}`, async () => {
        const ev = client.getRoom(ROOM)?.findEventById(eventId);
        if (!ev) return undefined;
        await client.decryptEventIfNeeded(ev);
        return ev.getType() === 'm.room.message' && !ev.isDecryptionFailure() ? ev : undefined;
      }),
  };
}

/** An outbound client recording every request the target makes through it (both `request` and `fetch`). */
function recordingHttp() {
  const base = createTestHttp();
  const calls: { via: 'request' | 'fetch'; method: string; path: string }[] = [];
  const http: OutboundHttp = {
    request: (url, init) => {
      calls.push({
        via: 'request',
        method: init?.method ?? (init?.json !== undefined || init?.body !== undefined ? 'POST' : 'GET'),
        path: new URL(url).pathname,
      });
      return base.request(url, init);
    },
    fetch: ((input: string | URL | Request, init?: RequestInit) => {
      calls.push({
        via: 'fetch',
        method: init?.method ?? 'GET',
        path: new URL(input instanceof Request ? input.url : String(input)).pathname,
      });
      return base.fetch(input, init);
    }) as typeof fetch,
    resolveAllowed: (h) => base.resolveAllowed(h),
  };
  return { http, calls };
}

async function setup(tt: any, o: { encrypted?: boolean } = {}) {
  const hs = await new FakeHomeserver().start();
  tt.teardown(() => hs.close());
  hs.addUser(BOT, TOKEN, [ROOM], { deviceId: 'HERALDDEV' });
  hs.addUser(READER, 'syt_reader_unused', [ROOM], { deviceId: 'UNUSED', password: 'reader-pw' });
  if (o.encrypted !== false) hs.enableEncryption(ROOM, READER);
  const reader = await startReader(tt, hs);
  const { http, calls } = recordingHttp();
  const host = createTestHost({ http });
  const target = async () => {
    const harness = await host.target(plugin, { homeserver_url: hs.url, access_token: TOKEN, room_id: ROOM });
    tt.teardown(async () => {
      harness.abort.abort();
      await harness.instance.stop?.();
    });
    const opts = { signal: harness.abort.signal, attempt: 1 };
    return {
      harness,
      send: (m = {}) =>
        harness.instance.send(harness.message(m), opts) as Promise<{
          remoteId?: string;
          messageRef?: Record<string, string>;
        }>,
      update: (previous: any, m = {}) =>
        harness.instance.update!({ previous, message: harness.message(m) }, opts) as Promise<{
          remoteId?: string;
          messageRef?: Record<string, string>;
        }>,
    };
  };
  return { hs, reader, host, calls, target };
}

t.test('encrypted room: the reader decrypts the notice and the m.replace edit', async (tt) => {
  const { hs, reader, calls, target } = await setup(tt);
  const { harness, send, update } = await target();
  await harness.instance.start!();

  const identity = (await harness.store.get<DeviceIdentity>(IDENTITY_KEY))!;
  tt.equal(identity.deviceId, 'HERALDDEV', 'the device of the access token (whoami)');
  tt.equal(identity.userId, BOT);
  tt.ok(harness.store.sealedKeys.has(IDENTITY_KEY), "the device's private keys are stored sealed at rest");
  const published = hs.deviceKeys.get(BOT)!.get('HERALDDEV')!;
  const ed25519 = published.keys['ed25519:HERALDDEV'];
  tt.ok(published.algorithms.includes('m.megolm.v1.aes-sha2'), 'device keys published');
  tt.same(await harness.instance.health!(), {
    status: 'ok',
    detail: `posting as ${BOT} into an encrypted room (device HERALDDEV, Ed25519 key ${ed25519})`,
  });

  const first = await send({
    deliveryId: 'd1',
    title: 'UPS on <b>battery</b>',
    plainTitle: 'UPS on battery',
    body: 'Charge 80%',
    plainBody: 'Charge 80%',
  });
  const ev = hs.events.at(-1)!;
  tt.equal(ev.type, 'm.room.encrypted', 'the homeserver sees only ciphertext');
  tt.equal(ev.txnId, transactionId('d1'), "with the delivery's own transaction id");
  tt.match(ev.content, {
    algorithm: 'm.megolm.v1.aes-sha2',
    device_id: 'HERALDDEV',
    ciphertext: String,
    session_id: String,
  });
  tt.notMatch(JSON.stringify(ev.content), /UPS|Charge/, 'no plain text on the wire');
  tt.same(first.messageRef, { room_id: ROOM, event_id: ev.event_id });

  const seen = await reader.decrypted(ev.event_id);
  tt.equal(seen.getSender(), BOT);
  tt.same(
    seen.getContent(),
    {
      msgtype: 'm.notice',
      body: 'UPS on battery\n\nCharge 80%',
      format: 'org.matrix.custom.html',
      formatted_body: '<strong>UPS on <b>battery</b></strong><br><br>Charge 80%',
    },
    'decrypted: an m.notice',
  );
  tt.equal(seen.getSenderKey(), published.keys['curve25519:HERALDDEV'], "sent from the target's device");

  // A retried delivery (the answer was lost) reuses its transaction: the homeserver posts nothing new.
  hs.loseNextResponse = true;
  const lost = await caught(send({ deliveryId: 'd-lost', title: 'Lost', plainTitle: 'Lost' }));
  tt.equal(errorCode(lost), 'RETRYABLE_SEND');
  const stored = hs.events.length;
  const again = await send({ deliveryId: 'd-lost', title: 'Lost', plainTitle: 'Lost' });
  tt.equal(hs.events.length, stored, 'no duplicate');
  tt.equal(again.remoteId, hs.events.at(-1)!.event_id);
  tt.equal((await reader.decrypted(again.remoteId!)).getContent().body, 'Lost\n\nBody');

  // The edit: m.relates_to in the clear (the spec's rule for encrypted edits), the new content inside.
  const previous = { messageRef: first.messageRef!, deliveryId: 'd1', eventType: 'ups' };
  const edited = await update(previous, {
    deliveryId: 'd2',
    title: 'UPS back on line',
    plainTitle: 'UPS back on line',
    body: 'Charge 81%',
    plainBody: 'Charge 81%',
  });
  const edit = hs.events.at(-1)!;
  tt.equal(edit.type, 'm.room.encrypted');
  tt.same(
    edit.content['m.relates_to'],
    { rel_type: 'm.replace', event_id: ev.event_id },
    'the relation stays in the clear',
  );
  tt.equal(edit.content['m.new_content'], undefined, 'the new content does not');
  tt.same(edited.messageRef, first.messageRef, 'later edits relate to the original event too');
  const seenEdit = await reader.decrypted(edit.event_id);
  tt.same(seenEdit.getContent()['m.new_content'], {
    msgtype: 'm.notice',
    body: 'UPS back on line\n\nCharge 81%',
    format: 'org.matrix.custom.html',
    formatted_body: '<strong>UPS back on line</strong><br><br>Charge 81%',
  });
  tt.equal(seenEdit.getContent().body, '* UPS back on line\n\nCharge 81%');
  tt.equal(
    seenEdit.replacingEventId?.() ?? seenEdit.getRelation()?.event_id,
    ev.event_id,
    'an edit of the first notice',
  );
  const original: MatrixEvent = await until('the reader to apply the edit', () => {
    const o = reader.client.getRoom(ROOM)?.findEventById(ev.event_id);
    return o?.replacingEventId() === edit.event_id ? o : undefined;
  });
  tt.equal(original.getContent().body, 'UPS back on line\n\nCharge 81%', 'the reader shows the replacement');

  // Every request of the target went through its outbound client; the sdk's through fetch.
  const bot = hs.requests.filter((r) => r.authorization === `Bearer ${TOKEN}`);
  tt.equal(calls.length >= bot.length, true, 'nothing reached the homeserver around ctx.http');
  for (const path of [
    '/_matrix/client/v3/sync',
    '/_matrix/client/v3/keys/upload',
    '/_matrix/client/v3/keys/claim',
    `/_matrix/client/v3/sendToDevice/m.room.encrypted/`,
  ]) {
    tt.ok(
      calls.some((c) => c.via === 'fetch' && c.path.startsWith(path)),
      `the sdk called ${path} through ctx.http.fetch`,
    );
  }
  tt.ok(
    calls.filter((c) => c.path.includes('/send/')).every((c) => c.via === 'request' && c.method === 'PUT'),
    'messages are PUT by the target itself',
  );
  tt.same(hs.refusedUploads, []);
  tt.notMatch(JSON.stringify(harness.log.lines), new RegExp(TOKEN), 'the token never reaches the log');
});

t.test('a restarted instance keeps its device and keys, and the reader still decrypts', async (tt) => {
  const { hs, reader, target } = await setup(tt);
  const one = await target();
  await one.harness.instance.start!();
  const firstSend = await one.send({ deliveryId: 'r1', title: 'Before restart', plainTitle: 'Before restart' });
  tt.equal((await reader.decrypted(firstSend.remoteId!)).getContent().body, 'Before restart\n\nBody');
  const keysBefore = structuredClone(hs.deviceKeys.get(BOT)!.get('HERALDDEV'));
  const stored = (await one.harness.store.get<DeviceIdentity>(IDENTITY_KEY))!;
  tt.ok(stored.nextKeyId >= 50, `the published one-time key ids are remembered (next ${stored.nextKeyId})`);
  one.harness.abort.abort();
  await one.harness.instance.stop!();

  // A new instance with the same store: as after a restart of the service.
  const two = await target();
  for (const [k, v] of one.harness.store.data) two.harness.store.data.set(k, structuredClone(v));
  const uploadsBefore = hs.uploads.length;
  await two.harness.instance.start!();
  tt.match(
    (await two.harness.instance.health!()).detail,
    `device HERALDDEV, Ed25519 key ${keysBefore.keys['ed25519:HERALDDEV']}`,
    'same device, same identity key',
  );
  tt.same(hs.deviceKeys.get(BOT)!.get('HERALDDEV'), keysBefore, 'the published device keys did not change');

  // A second device of the reader logs in after the restart and writes into the room first: its
  // client claims one of the target's one-time keys (the fake hands out the newest, published before
  // the restart), and the target publishes a replacement whose id was never used before.
  const laptop = await startReader(tt, hs);
  const sdk = await loadSdk();
  await laptop.client.sendMessage(ROOM, { msgtype: sdk.MsgType.Text, body: 'hello bot' });
  const fresh = await until('the restarted target to replace the claimed one-time key', () => {
    if (hs.refusedUploads.length) throw new Error(`the homeserver refused: ${hs.refusedUploads.join('; ')}`);
    return hs.uploads.slice(uploadsBefore).find((u) => u.userId === BOT && u.oneTimeKeyIds.length > 0);
  });
  const ids = fresh.oneTimeKeyIds.map((id) => Buffer.from(id.split(':')[1]!, 'base64').readBigUInt64BE());
  tt.ok(
    ids.every((id) => id >= BigInt(stored.nextKeyId)),
    'new one-time key ids continue after the ones published before the restart',
  );
  tt.same(hs.refusedUploads, [], 'the homeserver refused no key upload');
  const next = (await two.harness.store.get<DeviceIdentity>(IDENTITY_KEY))!.nextKeyId;
  tt.ok(next > stored.nextKeyId, 'and the store remembers them');
  tt.ok(two.harness.store.sealedKeys.has(IDENTITY_KEY), 'sealed at rest after every write');

  // The target learnt of the new device through sync: both of the reader's devices decrypt.
  const afterRestart = await two.send({ deliveryId: 'r2', title: 'After restart', plainTitle: 'After restart' });
  for (const r of [reader, laptop]) {
    const seen = await r.decrypted(afterRestart.remoteId!);
    tt.equal(
      seen.getContent().body,
      'After restart\n\nBody',
      `device ${r.deviceId} decrypts what the restarted target sends`,
    );
    tt.equal(seen.getSenderKey(), keysBefore.keys['curve25519:HERALDDEV']);
  }
});

t.test('a plain room that turns encrypted is encrypted from the next check on', async (tt) => {
  const { hs, reader, host, target } = await setup(tt, { encrypted: false });
  const { harness, send } = await target();
  await harness.instance.start!();
  tt.same(await harness.instance.health!(), { status: 'ok', detail: `posting as ${BOT}` });
  await send({ deliveryId: 'p1' });
  tt.equal(hs.events.at(-1)!.type, 'm.room.message', 'plain while the room is plain');
  tt.equal(hs.deviceKeys.get(BOT), undefined, 'no device keys for a plain room');

  hs.enableEncryption(ROOM, READER);
  await send({ deliveryId: 'p2' });
  tt.equal(hs.events.at(-1)!.type, 'm.room.message', 'the last answer is trusted for a while');
  host.clock.advance(ENCRYPTION_RECHECK_MS);
  const r = await send({ deliveryId: 'p3', title: 'Now secret', plainTitle: 'Now secret' });
  tt.equal(hs.events.at(-1)!.type, 'm.room.encrypted', 'encrypted once the check sees m.room.encryption');
  tt.equal((await reader.decrypted(r.remoteId!)).getContent().body, 'Now secret\n\nBody');
  tt.match((await harness.instance.health!()).detail, /posting as @herald:example.org/);

  // The token is revoked: encrypted sends fail as plain ones do, and never leak it.
  hs.tokens.delete(TOKEN);
  const err = await caught(send({ deliveryId: 'p4' }));
  tt.equal(errorCode(err), 'AUTH_FAILED');
  tt.match(err.message, /M_UNKNOWN_TOKEN/);
  tt.equal((await harness.instance.health!()).status, 'error');
  tt.notMatch(JSON.stringify(harness.log.lines), new RegExp(TOKEN));
});

t.test("another target on the same device is refused: its keys would replace the first one's", async (tt) => {
  const { hs, target } = await setup(tt);
  const one = await target();
  await one.harness.instance.start!();
  const keys = structuredClone(hs.deviceKeys.get(BOT)!.get('HERALDDEV'));
  const two = await target();
  const err = await caught(two.harness.instance.start!());
  tt.equal(errorCode(err), 'CONFIG');
  tt.match(err.message, /device HERALDDEV of this access token already has encryption keys/);
  tt.equal((await two.harness.instance.health!()).status, 'error');
  tt.same(hs.deviceKeys.get(BOT)!.get('HERALDDEV'), keys, "the first target's keys stay");
  const sendErr = await caught(two.send());
  tt.equal(errorCode(sendErr), 'PERMANENT_SEND', 'its sends fail for good, naming why');
  tt.match(sendErr.message, /access token of its own/);
});
