import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import { startFakeNut } from '../test/fakes/nut.ts';
import type { NutConnectOptions } from './client.ts';
import { NutClient } from './client.ts';
import { createNutProvider } from './index.ts';
import { NutConnectionError, NutServerError, NutTlsError } from './protocol.ts';

const opts = (port: number, o: Partial<NutConnectOptions> = {}): NutConnectOptions => ({
  host: '127.0.0.1',
  address: '127.0.0.1',
  port,
  connectTimeoutMs: 500,
  replyTimeoutMs: 300,
  starttls: 'off',
  ...o,
});

/** A self-signed certificate for 127.0.0.1 and localhost, made with the openssl CLI. */
function testCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'herald-nut-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    return {
      key: readFileSync(path.join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

t.test('lists variables and says goodbye', async (t) => {
  const fake = await startFakeNut({ vars: { 'ups.mfr': 'Say "hi"' } });
  t.teardown(() => fake.close());
  const c = await NutClient.connect(opts(fake.port));
  const vars = await c.listVars('test');
  t.equal(vars.get('ups.status'), 'OL');
  t.equal(vars.get('ups.mfr'), 'Say "hi"');
  await t.rejects(c.listVars('nope'), NutServerError);
  await c.logout();
  t.same(fake.commands, ['LIST VAR test', 'LIST VAR nope', 'LOGOUT']);
});

t.test('a peer that never answers times out', async (t) => {
  const fake = await startFakeNut();
  t.teardown(() => fake.close());
  fake.behaviour = 'silent';
  const c = await NutClient.connect(opts(fake.port));
  const began = Date.now();
  await t.rejects(c.listVars('test'), { name: 'NutConnectionError', message: /no reply from upsd within 300 ms/ });
  t.ok(Date.now() - began < 1000);
  await c.logout();
});

t.test('a peer that hangs in the middle of a LIST times out', async (t) => {
  const fake = await startFakeNut();
  t.teardown(() => fake.close());
  fake.behaviour = 'hang-mid-list';
  const c = await NutClient.connect(opts(fake.port));
  await t.rejects(c.listVars('test'), NutConnectionError);
  c.destroy();
});

t.test('a peer that drops in the middle of a LIST is an error, not a crash', async (t) => {
  const fake = await startFakeNut();
  t.teardown(() => fake.close());
  fake.behaviour = 'drop-mid-list';
  const c = await NutClient.connect(opts(fake.port));
  await t.rejects(c.listVars('test'), { name: 'NutConnectionError', message: /closed|reset/ });
  await c.logout();
});

t.test('connect failures and time limits', async (t) => {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  await t.rejects(NutClient.connect(opts(port)), { name: 'NutConnectionError', message: /ECONNREFUSED/ });
  // 192.0.2.0/24 is TEST-NET-1: packets go nowhere, so only the connect time limit ends the attempt.
  const began = Date.now();
  await t.rejects(NutClient.connect(opts(3493, { address: '192.0.2.1', connectTimeoutMs: 200 })), NutConnectionError);
  t.ok(Date.now() - began < 1500);
});

t.test('STARTTLS: upgrade with a trusted certificate, refusal modes', async (t) => {
  const cert = testCertificate();
  const tlsFake = await startFakeNut({ tls: cert });
  const plainFake = await startFakeNut();
  t.teardown(async () => {
    await tlsFake.close();
    await plainFake.close();
  });

  const c = await NutClient.connect(opts(tlsFake.port, { starttls: 'require', tlsCa: cert.cert }));
  t.equal(c.secure, true);
  t.equal((await c.listVars('test')).get('ups.status'), 'OL', 'the conversation continues over TLS');
  await c.logout();

  await t.rejects(
    NutClient.connect(opts(tlsFake.port, { starttls: 'require' })),
    NutTlsError,
    'an untrusted certificate is refused',
  );
  await t.rejects(NutClient.connect(opts(plainFake.port, { starttls: 'require' })), {
    name: 'NutTlsError',
    message: /FEATURE-NOT-CONFIGURED/,
  });
  const fallback = await NutClient.connect(opts(plainFake.port, { starttls: 'try' }));
  t.equal(fallback.secure, false, '`try` continues in clear text when TLS is not offered');
  t.equal((await fallback.listVars('test')).size, 3);
  await fallback.logout();
});

t.test('the provider maps a hanging peer to comm loss once, and login errors to typed errors', async (t) => {
  const fake = await startFakeNut({ users: { mon: 'right' } });
  t.teardown(() => fake.close());
  const plugin = createNutProvider({ connectTimeoutMs: 300, replyTimeoutMs: 200 });
  const host = createTestHost();
  const h = await host.provider(plugin, { host: '127.0.0.1', port: fake.port, ups_name: 'test' });
  await h.instance.poll!({ trackers: [], signal: h.abort.signal });
  t.same(h.emitted, [], 'the first poll only seeds');
  fake.behaviour = 'hang-mid-list';
  await t.rejects(h.instance.poll!({ trackers: [], signal: h.abort.signal }), { code: 'NOT_READY' });
  await t.rejects(h.instance.poll!({ trackers: [], signal: h.abort.signal }), { code: 'NOT_READY' });
  t.same(
    h.emitted.map((e) => e.type),
    ['ups_comm_lost'],
    'emitted once for the outage',
  );
  t.match(await h.instance.health!(), { status: 'degraded' });
  fake.behaviour = 'normal';
  await h.instance.poll!({ trackers: [], signal: h.abort.signal });
  t.same(
    h.emitted.map((e) => e.type),
    ['ups_comm_lost', 'ups_comm_restored'],
  );
  t.match(await h.instance.health!(), { status: 'ok' });

  const bad = await host.provider(plugin, {
    host: '127.0.0.1',
    port: fake.port,
    ups_name: 'test',
    username: 'mon',
    password: 'wrong',
  });
  await t.rejects(
    async () => {
      await bad.instance.start!();
    },
    { code: 'AUTH_FAILED' },
  );
  t.notOk(
    bad.log.lines.some((l) => JSON.stringify(l).includes('wrong')),
    'the password is not logged',
  );
  const half = await host.provider(plugin, { host: '127.0.0.1', port: fake.port, ups_name: 'test', username: 'mon' });
  await t.rejects(half.instance.poll!({ trackers: [], signal: half.abort.signal }), { code: 'CONFIG' });
  const good = await host.provider(plugin, {
    host: '127.0.0.1',
    port: fake.port,
    ups_name: 'test',
    username: 'mon',
    password: 'right',
  });
  await good.instance.start!();
  await good.instance.poll!({ trackers: [], signal: good.abort.signal });
  t.equal(
    fake.commands.filter((c) => c === 'LOGIN test').length,
    2,
    'the credentials are checked once per instance (bad + good)',
  );
});

t.test('stale data counts as comm loss; a WAIT status is skipped without a baseline', async (t) => {
  const fake = await startFakeNut({ vars: { 'ups.status': 'WAIT' } });
  t.teardown(() => fake.close());
  const h = await createTestHost().provider(createNutProvider({ replyTimeoutMs: 300 }), {
    host: '127.0.0.1',
    port: fake.port,
    ups_name: 'test',
  });
  const poll = () => h.instance.poll!({ trackers: [], signal: h.abort.signal });
  await poll();
  t.equal(h.store.data.size, 0, 'no baseline from a WAIT reading');
  t.match(await h.instance.health!(), { status: 'degraded', detail: /waiting/ });
  fake.vars['ups.status'] = 'OB DISCHRG';
  await poll();
  t.same(h.emitted, [], 'the first real reading is the silent baseline');
  fake.behaviour = 'stale';
  await t.rejects(poll(), { code: 'NOT_READY', message: /stale/ });
  t.match(h.emitted, [{ type: 'ups_comm_lost', payload: { reason: /stale/ } }]);
  fake.behaviour = 'normal';
  fake.vars['ups.status'] = 'OL';
  await poll();
  t.same(
    h.emitted.map((e) => e.type),
    ['ups_comm_lost', 'ups_comm_restored', 'ups_online'],
  );
});

t.test('the provider dials the address the outbound policy checked', async (t) => {
  const fake = await startFakeNut();
  t.teardown(() => fake.close());
  const real = createTestHost().http;
  const asked: string[] = [];
  const http = {
    ...real,
    resolveAllowed: async (name: string) => {
      asked.push(name);
      return { address: '127.0.0.1', family: 4 as const };
    },
  };
  const h = await createTestHost({ http }).provider(createNutProvider(), {
    host: 'ups.herald-test.invalid',
    port: fake.port,
    ups_name: 'test',
  });
  await h.instance.poll!({ trackers: [], signal: h.abort.signal });
  t.same(asked, ['ups.herald-test.invalid']);
  t.equal(h.store.data.size, 1, 'baseline recorded through the pinned address');

  const refusing = {
    ...real,
    resolveAllowed: async () => {
      throw Object.assign(new Error('refused to connect to ups.lan: 10.0.0.3 is private'), {
        code: 'OUTBOUND_REFUSED',
      });
    },
  };
  const r = await createTestHost({ http: refusing }).provider(createNutProvider(), {
    host: 'ups.lan',
    ups_name: 'test',
  });
  await t.rejects(r.instance.poll!({ trackers: [], signal: r.abort.signal }), { code: 'CONFIG', message: /private/ });
});
