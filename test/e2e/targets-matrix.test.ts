/**
 * End to end through the real service: example webhook → tracker → Matrix target → a fake
 * homeserver speaking the client-server API (transactions scoped to the access token).
 */
import t from 'tap';
import { FakeHomeserver } from '../../plugins/target-matrix/test/fakes/matrix.ts';
import { startService } from '../helpers/service.ts';
import { metric, plugins } from './support.ts';
import { gap, pipeline } from './targets-support.ts';

const USER = '@herald:example.org';
const ROOM = '!ops:example.org';
const TOKEN = 'syt_aGVyYWxk_e2eTokenValue_0001';

t.test(
  'matrix: m.notice delivered; M_LIMIT_EXCEEDED waits retry_after_ms; a lost answer is not posted twice; a bad ' +
    'token fails',
  async (t) => {
    const hs = await new FakeHomeserver().start();
    hs.addUser(USER, TOKEN, [ROOM]);
    const s = await startService({ SERVICE_PLUGINS: plugins('herald-plugin-example', '@herald/target-matrix') });
    t.teardown(async () => {
      await s.stop();
      await hs.close();
    });
    const p = await pipeline(s, {
      kind: 'matrix',
      name: 'Room',
      config: { homeserver_url: hs.url, access_token: TOKEN, room_id: ROOM },
    });
    const puts = () => hs.requests.filter((r) => r.method === 'PUT');

    const first = await p.fire('<b>door</b>');
    await p.tick();
    t.equal(hs.events.length, 1);
    const ev = hs.events[0];
    t.equal(ev.type, 'm.room.message');
    t.equal(ev.room_id, ROOM);
    t.equal(ev.sender, USER);
    t.equal(ev.content.msgtype, 'm.notice', 'a notice, so bots do not answer it');
    t.match(ev.content.body, /^Thing: <b>door<\/b>/, 'plain body');
    t.equal(ev.content.format, 'org.matrix.custom.html');
    t.match(ev.content.formatted_body, /&lt;b&gt;door&lt;\/b&gt;/, 'HTML body escaped');
    t.equal((await p.outcome(first)).event.dispatch_status, 'dispatched');
    t.ok(
      hs.requests.every((r) => r.authorization === `Bearer ${TOKEN}`),
      'the token travels in the header',
    );

    const t0 = '2026-04-01T12:00:00.000Z';
    s.clock.set(t0);
    hs.rateLimit = { count: 1, ms: 1500 };
    const limitedId = await p.fire('busy');
    await p.tick();
    const limited = await p.outcome(limitedId);
    t.equal(limited.delivery.status, 'queued');
    t.equal(gap(t0, limited.delivery.next_attempt_at), 1500, 'retry_after_ms honoured');
    t.equal(Number(limited.delivery.last_status_code), 429);
    s.clock.set('2026-04-01T12:00:01.400Z');
    await p.tick();
    t.equal(hs.events.length, 1, 'not before the delay');
    s.clock.set('2026-04-01T12:00:01.500Z');
    await p.tick();
    t.equal((await p.outcome(limitedId)).delivery.status, 'sent');
    t.match(hs.events.at(-1)!.content.body, /^Thing: busy/);

    hs.loseNextResponse = true;
    const lostId = await p.fire('once only');
    await p.tick();
    const lost = await p.outcome(lostId);
    t.equal(lost.delivery.status, 'queued', 'no answer: retried later');
    t.equal(hs.events.length, 3, 'although the homeserver stored it');
    s.clock.set('2026-04-01T12:30:00.000Z');
    await p.tick();
    t.equal((await p.outcome(lostId)).delivery.status, 'sent');
    t.equal(hs.events.length, 3, 'the retry reused the transaction id: no duplicate');
    const lastTwo = puts()
      .slice(-2)
      .map((r) => r.path);
    t.equal(lastTwo[0], lastTwo[1], 'same PUT path (same txnId) both times');

    const bad = await pipeline(s, {
      kind: 'matrix',
      name: 'Bad',
      config: { homeserver_url: hs.url, access_token: 'syt_revoked_token', room_id: ROOM },
    });
    const badId = await bad.fire('unheard');
    await bad.tick();
    const failed = await bad.outcome(badId);
    t.equal(failed.event.dispatch_status, 'failed');
    t.match(failed.event.details.targets[0].error, /M_UNKNOWN_TOKEN.*rejected/);
    const seen = hs.requests.length;
    s.clock.set('2026-04-01T15:00:00.000Z');
    await bad.tick();
    t.equal(hs.requests.length, seen, 'not retried');
    t.equal(hs.events.length, 3);
    t.equal(
      await metric(s, 'service_target_send_failures_total', '{target_type="matrix",status_code="401"}'),
      1,
      'counted under 401',
    );
    t.equal(
      await metric(s, 'service_target_send_failures_total', '{target_type="matrix",status_code="0"}'),
      1,
      'the lost answer under 0',
    );
  },
);

t.test(
  "matrix, encrypted room: the notice goes out encrypted and the target's device keys are stored sealed",
  async (t) => {
    // matrix-js-sdk arms a long timer for every /sync and never clears it; unref those so the file ends.
    const arm = globalThis.setTimeout;
    globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
      const timer = arm(fn, ms, ...args);
      if ((ms ?? 0) >= 60_000) timer.unref();
      return timer;
    }) as typeof setTimeout;
    t.teardown(() => {
      globalThis.setTimeout = arm;
    });
    const hs = await new FakeHomeserver().start();
    hs.addUser(USER, TOKEN, [ROOM], { deviceId: 'HERALDDEV' });
    hs.addUser('@reader:example.org', 'syt_reader_unused', [ROOM], { deviceId: 'READER' });
    hs.enableEncryption(ROOM, '@reader:example.org');
    const s = await startService({ SERVICE_PLUGINS: plugins('herald-plugin-example', '@herald/target-matrix') });
    t.teardown(async () => {
      await s.stop();
      await hs.close();
    });
    const p = await pipeline(s, {
      kind: 'matrix',
      name: 'Vault',
      config: { homeserver_url: hs.url, access_token: TOKEN, room_id: ROOM },
    });

    const id = await p.fire('the vault door');
    for (let i = 0; i < 50 && (await p.outcome(id)).delivery.status !== 'sent'; i++) await p.tick();
    t.equal((await p.outcome(id)).delivery.status, 'sent');
    const ev = hs.events.at(-1)!;
    t.equal(ev.type, 'm.room.encrypted', 'the homeserver sees only ciphertext');
    t.notMatch(JSON.stringify(ev.content), /vault door/, 'no plain text on the wire');

    const rows = await s.service.core.db.all<{ key: string; value: string }>(
      'SELECT key, value FROM plugin_store WHERE instance_id = ?',
      [p.target.id],
    );
    const device = rows.find((r) => r.key === 'e2ee.device');
    t.ok(device, 'the device identity is in the instance store');
    t.match(device!.value, /^enc:v1:/, 'sealed at rest');
    t.notMatch(device!.value, /HERALDDEV|example\.org/, 'nothing of it in the clear');
    t.match(
      JSON.parse(s.service.core.atRest.open(device!.value)),
      { userId: USER, deviceId: 'HERALDDEV' },
      "the service's key opens it",
    );
    t.equal(hs.deviceKeys.get(USER)?.has('HERALDDEV'), true, 'the device keys were published');
  },
);
