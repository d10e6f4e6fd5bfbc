import t from 'tap';
import { startService, startSink, TEST_PLUGINS, type TestService, unsealed } from '../helpers/service.ts';

const PLUGINS = `${TEST_PLUGINS},@herald/target-telegram`;

async function provider(s: TestService, token = s.admin.token) {
  const p = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
  });
  if (p.status !== 201) throw new Error(p.text);
  return p.body;
}

t.test('trackers: CRUD, declared event types, quiet hours, tracker config', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  t.teardown(() => s.stop());
  const token = s.admin.token;
  const p = await provider(s);
  const relay = s.service.core.services.get('relay') as { trackerChanged(id: string): Promise<void> };
  const changed: string[] = [];
  const original = relay.trackerChanged.bind(relay);
  relay.trackerChanged = async (id) => {
    changed.push(id);
    return original(id);
  };

  const body = {
    provider_id: p.id,
    name: 'Night',
    event_types: { thing_happened: true, alarm: false },
    quiet_hours: { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' },
    quiet_policies: { thing_happened: 'drop' },
    config: { tag: 'x' },
  };
  const c = await s.request('POST', '/api/trackers', { token, body });
  t.equal(c.status, 201, 'created');
  t.match(c.body, {
    provider_id: p.id,
    provider_kind: 'example',
    name: 'Night',
    enabled: true,
    event_types: { thing_happened: true, alarm: false },
    quiet_policies: { thing_happened: 'drop' },
    config: { tag: 'x' },
    target_ids: [],
  });
  t.same(c.body.quiet_hours, body.quiet_hours);
  const plain = await s.request('POST', '/api/trackers', { token, body: { provider_id: p.id, name: 'Plain' } });
  t.equal(plain.status, 201);
  t.same(plain.body.event_types, {});
  t.equal(plain.body.quiet_hours, null);

  const bad = async (patch: Record<string, unknown>, re: RegExp, what: string) => {
    const r = await s.request('POST', '/api/trackers', { token, body: { ...body, ...patch } });
    t.equal(r.status, 422, what);
    t.match(r.body.detail, re, `${what}: clear detail`);
    return r;
  };
  const undeclared = await bad(
    { event_types: { nope: true } },
    /does not emit: nope.*thing_happened/,
    'undeclared event type',
  );
  t.equal(undeclared.body.errors[0].path, 'body/event_types/nope');
  await bad({ quiet_policies: { nope: 'send' } }, /nope/, 'undeclared event type in policies');
  await bad({ quiet_hours: { start: '24:00', end: '07:00', timezone: 'UTC' } }, /HH:MM/, 'hour 24');
  await bad({ quiet_hours: { start: '7:00', end: '08:00', timezone: 'UTC' } }, /HH:MM/, 'one-digit hour');
  await bad({ quiet_hours: { start: '22:60', end: '07:00', timezone: 'UTC' } }, /HH:MM/, 'minute 60');
  await bad({ quiet_hours: { start: '22:00', end: '22:00', timezone: 'UTC' } }, /differ/, 'start equals end');
  await bad({ quiet_hours: { start: '22:00', end: '07:00', timezone: 'Mars/Olympus' } }, /IANA/, 'unknown time zone');
  await bad({ quiet_hours: { start: '22:00', end: '07:00' } }, /timezone/, 'missing time zone');
  await bad(
    { quiet_hours: { start: '22:00', end: '07:00', timezone: 'UTC', days: [1] } },
    /days/,
    'unknown quiet-hours field',
  );
  await bad({ quiet_policies: { thing_happened: 'later' } }, /quiet_policies/, 'unknown policy');
  await bad({ config: { tag: 5 } }, /tracker configuration/, 'tracker config against the plugin schema');
  await bad({ event_types: { thing_happened: 'yes' } }, /event_types/, 'non-boolean switch');
  for (const field of ['id', 'user_id', 'created_at', 'consecutive_poll_failures', 'last_poll_at'])
    await bad({ [field]: 'x' }, new RegExp(field), `${field} refused`);
  const missing = await s.request('POST', '/api/trackers', {
    token,
    body: { ...body, provider_id: '01900000-0000-7000-8000-000000000000' },
  });
  t.equal(missing.status, 404, 'unknown provider');
  t.match(missing.body.detail, /Provider/);

  const list = await s.request('GET', '/api/trackers', { token });
  t.same(list.body.trackers.map((x: any) => x.name).slice(0, 2), ['Plain', 'Night'], 'newest first');
  t.ok(
    list.body.trackers.some((x: any) => x.provider_kind === 'bridge_self'),
    'the self-monitoring tracker is listed',
  );
  const byProvider = await s.request('GET', `/api/trackers?provider_id=${p.id}`, { token });
  t.same(
    byProvider.body.trackers.map((x: any) => x.name),
    ['Plain', 'Night'],
    'filtered by provider',
  );

  const u = await s.request('PATCH', `/api/trackers/${c.body.id}`, {
    token,
    body: { quiet_hours: null, enabled: false },
  });
  t.equal(u.status, 200);
  t.equal(u.body.quiet_hours, null);
  t.equal(u.body.enabled, false);
  t.same(u.body.event_types, body.event_types, 'untouched fields kept');
  t.same(changed, [c.body.id], 'the pipeline is told about the change');
  const u2 = await s.request('PATCH', `/api/trackers/${c.body.id}`, {
    token,
    body: { quiet_hours: { start: '23:30', end: '06:15', timezone: 'Asia/Tokyo' } },
  });
  t.same(u2.body.quiet_hours, { start: '23:30', end: '06:15', timezone: 'Asia/Tokyo' });
  t.equal(
    (
      await s.request('PATCH', `/api/trackers/${c.body.id}`, {
        token,
        body: { quiet_hours: { start: '23:30', end: '23:30', timezone: 'UTC' } },
      })
    ).status,
    422,
  );
  t.equal(
    (await s.request('PATCH', `/api/trackers/${c.body.id}`, { token, body: { event_types: { nope: false } } })).status,
    422,
  );
  t.equal(
    (await s.request('PATCH', `/api/trackers/${c.body.id}`, { token, body: { user_id: s.admin.id } })).status,
    422,
  );
  t.equal(
    (await s.request('GET', `/api/trackers/${c.body.id}`, { token })).body.quiet_hours.timezone,
    'Asia/Tokyo',
    'refused updates changed nothing',
  );

  t.equal((await s.request('DELETE', `/api/trackers/${c.body.id}`, { token })).status, 204);
  t.equal((await s.request('GET', `/api/trackers/${c.body.id}`, { token })).status, 404);
  await s.request('DELETE', `/api/providers/${p.id}`, { token });
  t.equal(
    (await s.request('GET', `/api/trackers/${plain.body.id}`, { token })).status,
    404,
    'trackers go with their provider',
  );
});

t.test('targets: CRUD, masking, bot check, links and test sends', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const token = s.admin.token;
  const db = s.service.core.db;

  const c = await s.request('POST', '/api/targets', {
    token,
    body: { kind: 'recorder', name: 'Rec', config: { url: sink.url, api_token: 'tok-123456' }, locale: 'en' },
  });
  t.equal(c.status, 201, 'created');
  t.match(c.body, {
    kind: 'recorder',
    name: 'Rec',
    locale: 'en',
    enabled: true,
    config: { url: sink.url, api_token: '********' },
    secrets_set: ['api_token'],
  });
  t.notMatch(c.text, /tok-123456/);
  t.equal(
    unsealed(
      s,
      JSON.parse((await db.get<{ config: string }>('SELECT config FROM targets WHERE id = ?', [c.body.id]))!.config)
        .api_token,
    ),
    'tok-123456',
    'stored sealed',
  );

  const keep = await s.request('PATCH', `/api/targets/${c.body.id}`, {
    token,
    body: { name: 'Rec2', locale: 'ru', config: c.body.config },
  });
  t.equal(keep.status, 200);
  t.match(keep.body, { name: 'Rec2', locale: 'ru' });
  t.equal(
    unsealed(
      s,
      JSON.parse((await db.get<{ config: string }>('SELECT config FROM targets WHERE id = ?', [c.body.id]))!.config)
        .api_token,
    ),
    'tok-123456',
    'masked secret kept',
  );
  const drop = await s.request('PATCH', `/api/targets/${c.body.id}`, { token, body: { config: { url: sink.url } } });
  t.same(drop.body.secrets_set, [], 'a config without the secret removes it');

  const bad = async (body: Record<string, unknown>, what: string, status = 422) => {
    const r = await s.request('POST', '/api/targets', {
      token,
      body: { kind: 'recorder', name: 'X', config: { url: sink.url }, locale: 'en', ...body },
    });
    t.equal(r.status, status, what);
    return r;
  };
  t.match(
    (await bad({ kind: 'smoke' }, 'unknown kind')).body.detail,
    /Unknown target kind "smoke".*recorder.*telegram/,
  );
  await bad({ kind: 'example' }, 'a provider kind is not a target kind');
  await bad({ config: { url: 'ftp://x' } }, 'config against the plugin schema');
  await bad({ locale: 'de' }, 'locale en or ru');
  await bad({ locale: undefined }, 'locale required');
  for (const field of ['id', 'user_id', 'consecutive_failures', 'last_error', 'created_at'])
    await bad({ [field]: 'x' }, `${field} refused`);
  const noBot = await bad(
    { kind: 'telegram', config: { bot_id: '01900000-0000-7000-8000-000000000000', chat_id: '-100123' } },
    "bot_id must be one of the caller's bots",
  );
  t.match(noBot.body.detail, /bot/);

  const p = await provider(s);
  const tr = await s.request('POST', '/api/trackers', { token, body: { provider_id: p.id, name: 'T' } });
  const link = await s.request('PUT', `/api/trackers/${tr.body.id}/targets/${c.body.id}`, { token });
  t.equal(link.status, 200);
  t.match(link.body, { tracker_id: tr.body.id, target_id: c.body.id });
  const again = await s.request('PUT', `/api/trackers/${tr.body.id}/targets/${c.body.id}`, { token });
  t.equal(again.status, 200, 'linking twice is harmless');
  const linked = await s.request('GET', `/api/trackers/${tr.body.id}/targets`, { token });
  t.same(
    linked.body.targets.map((x: any) => x.id),
    [c.body.id],
    'one link per pair',
  );
  t.equal(linked.body.targets[0].config.api_token, undefined);
  t.same((await s.request('GET', `/api/trackers/${tr.body.id}`, { token })).body.target_ids, [c.body.id]);
  t.equal(
    (await s.request('PUT', `/api/trackers/${tr.body.id}/targets/01900000-0000-7000-8000-000000000000`, { token }))
      .status,
    404,
    'unknown target',
  );
  t.equal((await s.request('DELETE', `/api/trackers/${tr.body.id}/targets/${c.body.id}`, { token })).status, 204);
  t.same((await s.request('GET', `/api/trackers/${tr.body.id}/targets`, { token })).body.targets, []);
  await s.request('PUT', `/api/trackers/${tr.body.id}/targets/${c.body.id}`, { token });

  const sent = await s.request('POST', `/api/targets/${c.body.id}/test`, { token });
  t.equal(sent.status, 200);
  t.equal(sent.body.ok, true, 'test send delivered');
  t.type(sent.body.detail, 'string');
  await sink.waitFor(1);
  t.equal(sink.received.length, 1);
  t.equal(sink.received[0].body.test, true, 'marked as a test message');
  const ru = await s.request('POST', `/api/targets/${c.body.id}/test`, { token, body: { locale: 'ru' } });
  t.equal(ru.body.ok, true);
  await sink.waitFor(2);
  t.equal(sink.received[1].body.locale, 'ru', 'locale from the body');
  t.equal((await s.request('POST', `/api/targets/${c.body.id}/test`, { token, body: { locale: 'xx' } })).status, 422);
  sink.respond(500);
  const failed = await s.request('POST', `/api/targets/${c.body.id}/test`, { token });
  t.equal(failed.status, 200, 'a failed send is still a completed test');
  t.equal(failed.body.ok, false);
  t.equal(failed.body.status_code, 500);

  t.equal((await s.request('DELETE', `/api/targets/${c.body.id}`, { token })).status, 204);
  t.equal((await s.request('GET', `/api/targets/${c.body.id}`, { token })).status, 404);
  t.same(
    (await s.request('GET', `/api/trackers/${tr.body.id}/targets`, { token })).body.targets,
    [],
    'links go with the target',
  );
});
