/**
 * The webhook rate limit is keyed on the source address: 60 requests a minute per address over all
 * providers of the generic webhook plugin together, not per provider (a sender cannot multiply it
 * by creating more webhook URLs). Addresses are set with X-Forwarded-For from loopback.
 */
import t from 'tap';
import { startService } from '../helpers/service.ts';
import { create, payloadLog, plugins } from './support.ts';

const SECRET = 'generic-webhook-secret-e2e-02';

t.test(
  '60 requests a minute from one address across two webhook providers; other addresses unaffected; the window ' +
    "ends a minute later on the service's clock",
  async (t) => {
    const s = await startService({ SERVICE_PLUGINS: plugins('@herald/provider-webhook') });
    t.teardown(() => s.stop());
    // The service's clock stands still: every request below falls in one window until the test moves it.
    s.clock.set('2026-04-01T10:00:00.000Z');
    const hooks = [];
    for (const name of ['First', 'Second']) {
      const p = await create(s, '/api/providers', {
        kind: 'webhook',
        name,
        auth_mode: 'bearer',
        config: { secret: SECRET, mapping: { title: 'name' } },
      });
      hooks.push({ id: p.id as string, path: new URL(p.webhook_url).pathname });
    }
    const post = (hook: { path: string }, ip: string, i: number) =>
      s.request('POST', hook.path, {
        raw: JSON.stringify({ name: `n${i}` }),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRET}`, 'x-forwarded-for': ip },
      });

    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await post(hooks[i % 2]!, '198.51.100.30', i)).status);
    t.same([...new Set(statuses)], [202], '60 accepted, spread over both providers');
    const limited = [await post(hooks[0]!, '198.51.100.30', 60), await post(hooks[1]!, '198.51.100.30', 61)];
    t.same(
      limited.map((r) => r.status),
      [429, 429],
      'the 61st and later are refused on either provider',
    );
    t.equal(
      limited[0]!.headers.get('retry-after'),
      '60',
      "Retry-After: the whole minute, as no time has passed on the service's clock",
    );
    t.match(limited[1]!.body.detail, /60 requests a minute/);
    for (const h of hooks)
      t.equal((await payloadLog(s, h.id))[0].status_code, 429, "each refusal is in its provider's payload log");

    t.equal((await post(hooks[1]!, '198.51.100.31', 62)).status, 202, 'another address is not held back');

    s.clock.advance(59_999);
    const last = await post(hooks[0]!, '198.51.100.30', 63);
    t.equal(last.status, 429, "the window's last millisecond: still refused");
    t.equal(last.headers.get('retry-after'), '1');
    s.clock.advance(1);
    t.equal(
      (await post(hooks[0]!, '198.51.100.30', 64)).status,
      202,
      'a minute after the first request the address is served again',
    );
    const events = await s.service.core.db.get('SELECT COUNT(*) AS n FROM event_log WHERE provider_id IN (?, ?)', [
      hooks[0]!.id,
      hooks[1]!.id,
    ]);
    t.equal(Number(events!.n), 62, 'only accepted requests were recorded');
  },
);
