/**
 * End to end through the real service: the generic webhook provider's auth modes as set through
 * the API, the core's rate limit and body limit in front of it, and mapped fields at the target.
 */

import crypto from 'node:crypto';
import t from 'tap';
import { startService, startSink } from '../helpers/service.ts';
import { chain, create, event, payloadLog, plugins, recorder, relayOf } from './support.ts';

const SECRET = 'generic-webhook-secret-e2e-01';
const MAPPING = {
  title: '{{alert.name}} on {{host}}',
  body: 'alert.summary',
  severity: 'alert.level',
  severity_map: { page: 'critical' },
};
const json = { 'content-type': 'application/json' };
const sig = (raw: string, secret = SECRET) => `sha256=${crypto.createHmac('sha256', secret).update(raw).digest('hex')}`;

t.test(
  'generic webhook: none needs the acknowledgement; hmac and bearer checked; mapped fields reach the target',
  async (t) => {
    const s = await startService({ SERVICE_PLUGINS: plugins('@herald/provider-webhook') });
    const sink = await startSink();
    t.teardown(async () => {
      await s.stop();
      await sink.close();
    });
    const target = await recorder(s, sink.url);
    const relay = relayOf(s);

    const refused = await s.request('POST', '/api/providers', {
      token: s.admin.token,
      body: { kind: 'webhook', name: 'Open', auth_mode: 'none', config: { mapping: MAPPING } },
    });
    t.equal(refused.status, 422, 'auth_mode none without the acknowledgement is refused at create');
    t.equal(refused.body.code, 'unauthenticated_not_acknowledged');
    t.equal(refused.body.errors[0].path, 'body/acknowledge_unauthenticated');

    const open = await chain(s, {
      provider: {
        kind: 'webhook',
        name: 'Open',
        auth_mode: 'none',
        acknowledge_unauthenticated: true,
        config: { mapping: MAPPING },
      },
      target,
    });
    t.equal(open.provider.auth_mode, 'none');
    const raw = JSON.stringify({ alert: { name: 'Disk full', summary: 'sda1 at 97%', level: 'page' }, host: 'nas' });
    const r0 = await s.request('POST', open.hook, { raw, headers: json });
    t.equal(r0.status, 202, 'acknowledged none accepts anyone');
    await relay.tick();
    const m = sink.received.at(-1)!.body;
    t.equal(m.title, 'Disk full on nas', 'mapped title');
    t.match(m.plainBody, /^sda1 at 97%\n\nSource: /, 'mapped body');
    t.equal((await event(s, r0.body.event_ids[0])).payload.severity, 'critical', 'severity mapped');

    const hmac = await chain(s, {
      provider: {
        kind: 'webhook',
        name: 'Signed',
        auth_mode: 'hmac_sha256',
        config: { secret: SECRET, mapping: MAPPING },
      },
      target,
    });
    t.equal(
      (await s.request('POST', hmac.hook, { raw, headers: { ...json, 'x-signature-256': sig(raw) } })).status,
      202,
      'good signature',
    );
    t.equal(
      (
        await s.request('POST', hmac.hook, {
          raw,
          headers: { ...json, 'x-signature-256': sig(raw, 'another-secret-0000000') },
        })
      ).status,
      401,
      'bad signature',
    );
    t.equal((await s.request('POST', hmac.hook, { raw, headers: json })).status, 401, 'no signature');

    const bearer = await chain(s, {
      provider: { kind: 'webhook', name: 'Bearer', auth_mode: 'bearer', config: { secret: SECRET, mapping: MAPPING } },
      target,
    });
    t.equal(
      (await s.request('POST', bearer.hook, { raw, headers: { ...json, authorization: `Bearer ${SECRET}` } })).status,
      202,
      'right bearer',
    );
    t.equal(
      (
        await s.request('POST', bearer.hook, {
          raw,
          headers: { ...json, authorization: 'Bearer wrong-wrong-wrong-wrong' },
        })
      ).status,
      401,
      'wrong bearer',
    );
    const log = await payloadLog(s, bearer.provider.id);
    t.same(
      log.map((e) => e.status_code),
      [401, 202],
      'each request is in the payload log',
    );
    t.notMatch(JSON.stringify(log), new RegExp(SECRET), 'the secret is not logged');

    await relay.tick();
    t.same(
      sink.received.map((x) => x.body.title),
      ['Disk full on nas', 'Disk full on nas', 'Disk full on nas'],
      'one message per accepted request',
    );

    const short = await s.request('POST', '/api/providers', {
      token: s.admin.token,
      body: { kind: 'webhook', name: 'Weak', auth_mode: 'bearer', config: { secret: 'short', mapping: MAPPING } },
    });
    t.equal(short.status, 422, 'a secret the instance would refuse at start is refused when saved');
    t.match(short.body.errors, [{ path: 'body/config/secret', code: 'minLength', params: { limit: 16 } }]);
  },
);

t.test('generic webhook: 413 over 1 MiB; the 61st request in a minute gets 429 with Retry-After', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: plugins('@herald/provider-webhook') });
  t.teardown(() => s.stop());
  const p = await create(s, '/api/providers', {
    kind: 'webhook',
    name: 'Busy',
    auth_mode: 'bearer',
    config: { secret: SECRET, mapping: { title: 'name' } },
  });
  const hook = new URL(p.webhook_url).pathname;
  const headers = { ...json, authorization: `Bearer ${SECRET}` };

  const big = JSON.stringify({ name: 'big', pad: 'x'.repeat(1024 * 1024) });
  const tooBig = await s.request('POST', hook, { raw: big, headers });
  t.equal(tooBig.status, 413, 'a body over 1 MiB is refused');
  const fits = JSON.stringify({ name: 'fits', pad: 'x'.repeat(1024 * 1024 - 40) });
  t.ok(Buffer.byteLength(fits) <= 1024 * 1024);
  t.equal(
    (await s.request('POST', hook, { raw: fits, headers })).status,
    202,
    'a body just under the limit is accepted',
  );

  // 2 requests so far in this minute; 58 more reach the limit of 60.
  const statuses: number[] = [];
  for (let i = 0; i < 58; i++)
    statuses.push((await s.request('POST', hook, { raw: JSON.stringify({ name: `n${i}` }), headers })).status);
  t.same([...new Set(statuses)], [202], 'the first 60 requests of the minute are accepted');
  const limited = await s.request('POST', hook, { raw: JSON.stringify({ name: 'one too many' }), headers });
  t.equal(limited.status, 429, 'the 61st is rate limited');
  const retryAfter = Number(limited.headers.get('retry-after'));
  t.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After in seconds (${retryAfter})`);
  t.match(limited.headers.get('content-type'), /problem\+json/);

  const log = await payloadLog(s, p.id);
  t.equal(log[0].status_code, 429, 'the refused request is in the payload log');
  t.match(log[0].error_message, /rate limit/);
  t.ok(
    log.some((e) => e.status_code === 413 && /exceeds/.test(e.error_message)),
    'so is the oversized one',
  );
  const events = await s.service.core.db.get('SELECT COUNT(*) AS n FROM event_log WHERE provider_id = ?', [p.id]);
  t.equal(Number(events!.n), 59, 'only the accepted requests were recorded');
});
