/**
 * The core of "messages that follow the state" (core/src/relay/pipeline/updates.ts) against the
 * real service and database: every first-party correlation names fields its examples carry, keys
 * are scoped per provider instance and thread, test events and targets that turned it off are not
 * followed, a late older event never takes the thread back, the index is isolated per target and
 * pruned with the event-log retention.
 */
import t from 'tap';
import { newId } from '../../core/src/http/ids.ts';
import { applyRetention } from '../../core/src/relay/feature.ts';
import { correlationKey, findThread, recordThread } from '../../core/src/relay/pipeline/updates.ts';
import { exportNow, upload } from '../backup/support.ts';
import { startService, TEST_PLUGINS } from '../helpers/service.ts';

const FIRST_PARTY = ['provider-codehost', 'provider-homeassistant', 'provider-nut', 'provider-webhook'];

t.test('correlation keys', async (t) => {
  const s = await startService({
    SERVICE_PLUGINS: [...new Set([...TEST_PLUGINS.split(','), ...FIRST_PARTY.map((d) => `@herald/${d}`)])].join(','),
  });
  t.teardown(() => s.stop());
  const core = s.service.core;
  const on = { update_messages: true };

  // Every declared correlation yields a key from the type's own example payload.
  let declared = 0;
  for (const p of [...core.plugins.plugins.values()].filter((x) => x.kind === 'provider')) {
    for (const [type, spec] of Object.entries(p.def.manifest.events ?? {})) {
      if (!spec.correlation) continue;
      declared++;
      const key = correlationKey(
        core,
        { provider_id: 'p1', provider_kind: p.id, event_type: type, payload: spec.example ?? {}, test: false },
        on,
      );
      t.ok(key, `${p.id} ${type}: the example has a key`);
    }
  }
  t.ok(declared >= 12, `first-party providers declare correlations (${declared})`);

  const ups = (type: string, payload: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    correlationKey(
      core,
      {
        provider_id: 'p1',
        provider_kind: 'nut',
        event_type: type,
        payload: JSON.stringify({ ups: 'rack', server: 'nas:3493', ...payload }),
        test: false,
        ...extra,
      },
      on,
    );
  t.equal(ups('ups_on_battery', {}), ups('ups_online', {}), 'on battery and on line share one thread');
  t.equal(ups('ups_low_battery', {}), ups('ups_online', {}));
  t.not(ups('ups_comm_lost', {}), ups('ups_on_battery', {}), 'the link to the UPS is another thread');
  t.equal(ups('ups_comm_lost', {}), ups('ups_comm_restored', {}));
  t.not(ups('ups_online', { ups: 'other' }), ups('ups_online', {}), 'another UPS, another key');
  t.not(ups('ups_online', {}, { provider_id: 'p2' }), ups('ups_online', {}), 'keys are per provider instance');
  t.equal(ups('ups_battery_replace', {}), undefined, 'a type without a correlation is never followed');
  t.equal(ups('ups_online', {}, { test: true }), undefined, 'test events are new messages');
  t.equal(
    correlationKey(
      core,
      {
        provider_id: 'p1',
        provider_kind: 'nut',
        event_type: 'ups_online',
        payload: { ups: 'rack', server: 'x' },
        test: false,
      },
      { update_messages: false },
    ),
    undefined,
    'a target that turned it off',
  );
  t.equal(
    correlationKey(
      core,
      {
        provider_id: null,
        provider_kind: 'nut',
        event_type: 'ups_online',
        payload: { ups: 'rack', server: 'x' },
        test: false,
      },
      on,
    ),
    undefined,
    'a deleted provider',
  );

  const pr = (type: string, number: number) =>
    correlationKey(
      core,
      {
        provider_id: 'p1',
        provider_kind: 'codehost',
        event_type: type,
        payload: { repository: 'acme/web', number },
        test: false,
      },
      on,
    );
  t.equal(pr('pull_request_opened', 42), pr('pull_request_merged', 42), 'a pull request opened, then merged');
  t.not(pr('pull_request_opened', 42), pr('pull_request_opened', 43));
  const hook = (payload: Record<string, unknown>) =>
    correlationKey(
      core,
      { provider_id: 'p1', provider_kind: 'webhook', event_type: 'webhook_received', payload, test: false },
      on,
    );
  t.equal(hook({ title: 'x' }), undefined, 'the generic webhook without mapping.event_key: not correlated');
  t.equal(hook({ event_key: '' }), undefined, 'an empty key: not correlated');
  t.equal(
    hook({ event_key: 'fp-1', title: 'firing' }),
    hook({ event_key: 'fp-1', title: 'resolved' }),
    'firing then resolved',
  );
  t.ok(hook({ event_key: 'x'.repeat(500) })!.startsWith('sha256:'), 'a long key is stored hashed');
});

t.test('the index: newest event wins, per target, pruned with the retention', async (t) => {
  const s = await startService({ SERVICE_EVENT_LOG_RETENTION_DAYS: '30' });
  t.teardown(() => s.stop());
  const db = s.service.core.db;
  const token = s.admin.token;
  const mk = async (name: string) =>
    (
      await s.request('POST', '/api/targets', {
        token,
        body: { kind: 'recorder', name, config: { url: 'http://127.0.0.1:9/' }, locale: 'en' },
      })
    ).body;
  const a = await mk('A');
  const b = await mk('B');
  const older = newId();
  const newer = newId();
  const now = s.clock.now().toISOString();
  await recordThread(db, {
    targetId: a.id,
    userId: s.admin.id,
    key: 'k',
    eventId: newer,
    eventType: 'ups_online',
    deliveryId: 'd2',
    ref: { id: 2 },
    now,
  });
  await recordThread(db, {
    targetId: a.id,
    userId: s.admin.id,
    key: 'k',
    eventId: older,
    eventType: 'ups_on_battery',
    deliveryId: 'd1',
    ref: { id: 1 },
    now,
  });
  t.same(
    await findThread(db, a.id, 'k'),
    { event_id: newer, event_type: 'ups_online', delivery_id: 'd2', message_ref: { id: 2 } },
    'a late older event does not take the thread back',
  );
  const newest = newId();
  await recordThread(db, {
    targetId: a.id,
    userId: s.admin.id,
    key: 'k',
    eventId: newest,
    eventType: 'ups_on_battery',
    deliveryId: 'd3',
    ref: { id: 3 },
    now,
  });
  t.same((await findThread(db, a.id, 'k'))!.message_ref, { id: 3 }, 'a newer one does');
  t.equal(await findThread(db, b.id, 'k'), undefined, 'per target');

  const other = await s.user();
  const foreign = await s.request('PATCH', `/api/targets/${a.id}`, {
    token: other.token,
    body: { update_messages: false },
  });
  t.equal(foreign.status, 404, `another user's target is a 404: ${foreign.text}`);
  const bad = await s.request('PATCH', `/api/targets/${a.id}`, { token, body: { update_messages: 'no' } });
  t.equal(bad.status, 422, 'a boolean');
  t.equal(bad.body.code, 'validation_failed');

  // Backups carry the switch (only when off); a restore compares it like any other field.
  const off = await s.request('PATCH', `/api/targets/${a.id}`, { token, body: { update_messages: false } });
  t.equal(off.body.update_messages, false);
  const backup = await exportNow(s, 'exclude');
  const records = backup.configuration?.targets ?? backup.targets;
  t.equal(records.find((r: any) => r.id === a.id).update_messages, false, 'exported when off');
  t.notOk('update_messages' in records.find((r: any) => r.id === b.id), 'left out when on');
  t.equal(
    (await s.request('PATCH', `/api/targets/${a.id}`, { token, body: { update_messages: true } })).body.update_messages,
    true,
  );
  const plan = await upload(s.url, token, JSON.stringify(backup), 'conflict_mode=skip');
  t.equal(plan.status, 201, plan.text.slice(0, 300));
  t.match(JSON.stringify(plan.body.summary), /differs in [^"]*update_messages/, 'a restore sees the difference');
  t.ok(
    (await s.request('DELETE', '/api/backup/pending-restore', { token })).status < 300,
    'the staged restore cancelled',
  );

  // A target's entries go with it; the rest age out with the event-log retention.
  await recordThread(db, {
    targetId: b.id,
    userId: s.admin.id,
    key: 'k',
    eventId: newest,
    eventType: 'ups_on_battery',
    deliveryId: 'd4',
    ref: { id: 4 },
    now,
  });
  t.equal((await s.request('DELETE', `/api/targets/${b.id}`, { token })).status < 300, true, 'target deleted');
  t.equal(await findThread(db, b.id, 'k'), undefined, 'its index entries with it');
  s.clock.set(new Date(Date.now() + 31 * 86_400_000));
  await applyRetention(s.service.core);
  t.equal(await findThread(db, a.id, 'k'), undefined, 'dropped after the retention period');
});
