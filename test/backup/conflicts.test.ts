/**
 * Conflict modes (overwrite, skip, fail), ambiguous matches, and secrets left out of `exclude`
 * backups: kept from the stored record when it exists, otherwise the record is restored disabled.
 */

import crypto from 'node:crypto';
import type { Test } from 'tap';
import t from 'tap';
import { Database as Db } from '../../core/src/db/database.ts';
import type { TestService } from '../helpers/service.ts';
import { type Configured, configure, exportNow, SECRETS, servicesWith, upload } from './support.ts';

const key = crypto.randomBytes(32).toString('hex');
const { boot, reboot } = servicesWith({ SERVICE_SECRET_KEY: key });

/** A configured service, its include backup, and then changes that conflict with it. */
async function diverged(t: Test): Promise<{ s: TestService; c: Configured; backup: string }> {
  const s = await boot(t);
  const c = await configure(s);
  const backup = JSON.stringify(await exportNow(s, 'include'));
  const u = c.user.token;
  await s.request('PATCH', `/api/providers/${c.provider.id}`, { token: u, body: { name: 'Renamed provider' } });
  await s.request('PATCH', `/api/trackers/${c.tracker.id}`, { token: u, body: { event_types: { alarm: false } } });
  await s.request('DELETE', `/api/actions/${c.digestAction.id}`, { token: u });
  return { s, c, backup };
}

t.test('fail: any existing record that would change refuses the restore (409), nothing staged', async (t) => {
  const { s, backup } = await diverged(t);
  t.teardown(() => s.stop());
  const before = (await exportNow(s)).configuration;
  const r = await upload(s.url, s.admin.token, backup, 'conflict_mode=fail');
  t.equal(r.status, 409);
  t.equal(r.body.code, 'restore_conflict');
  t.match(r.body.detail, /conflict_mode is "fail"/);
  t.same(
    r.body.errors.map((e: any) => e.path.split('/')[2]).sort(),
    ['providers', 'trackers'],
    'it names the conflicting records',
  );
  t.equal((await s.request('GET', '/api/backup/pending-restore', { token: s.admin.token })).status, 204);
  t.same((await exportNow(s)).configuration, before, 'untouched');
  const omitted = await upload(s.url, s.admin.token, backup, '');
  t.equal(omitted.status, 409, 'fail is the default conflict mode');
});

t.test('skip: existing records are kept, missing ones restored', async (t) => {
  let { s, c, backup } = await diverged(t);
  t.teardown(() => s.stop());
  const r = await upload(s.url, s.admin.token, backup, 'conflict_mode=skip');
  t.equal(r.status, 201);
  t.match(r.body.summary.counts, {
    providers: { kept: 1 },
    trackers: { kept: 1 },
    actions: { created: 1, unchanged: 1 },
  });
  t.equal(r.body.summary.conflicts.length, 2, 'the conflicts are listed');
  s = await reboot(t, s);
  const u = c.user.token;
  t.equal(
    (await s.request('GET', `/api/providers/${c.provider.id}`, { token: u })).body.name,
    'Renamed provider',
    'kept',
  );
  t.same(
    (await s.request('GET', `/api/trackers/${c.tracker.id}`, { token: u })).body.event_types,
    { alarm: false },
    'kept',
  );
  t.equal(
    (await s.request('GET', `/api/actions/${c.digestAction.id}`, { token: u })).status,
    200,
    'the missing action is restored',
  );
});

t.test('overwrite: existing records are replaced with the backup', async (t) => {
  let { s, c, backup } = await diverged(t);
  t.teardown(() => s.stop());
  const r = await upload(s.url, s.admin.token, backup, 'conflict_mode=overwrite');
  t.equal(r.status, 201);
  t.match(r.body.summary.counts, { providers: { replaced: 1 }, trackers: { replaced: 1 }, actions: { created: 1 } });
  s = await reboot(t, s);
  const u = c.user.token;
  const p = (await s.request('GET', `/api/providers/${c.provider.id}`, { token: u })).body;
  t.equal(p.name, 'Example source');
  t.equal(p.webhook_url.split('/api/hooks/')[1], c.provider.webhook_url.split('/api/hooks/')[1], 'same webhook token');
  t.same((await s.request('GET', `/api/trackers/${c.tracker.id}`, { token: u })).body.event_types, {
    stale_thing: false,
  });
  const action = (await s.request('GET', `/api/actions/${c.digestAction.id}`, { token: u })).body;
  t.equal(action.config.tracker_id, c.tracker.id);
  t.ok(action.next_run_at, 'the next run is computed again');
});

t.test(
  'a record matching two different existing records is refused by overwrite and fail, kept out by skip',
  async (t) => {
    let s = await boot(t);
    t.teardown(() => s.stop());
    const c = await configure(s);
    const backup = JSON.stringify(await exportNow(s, 'include'));
    const u = c.user.token;
    // The provider is deleted, and another one now holds its webhook token.
    const other = (
      await s.request('POST', '/api/providers', {
        token: u,
        body: { kind: 'example', name: 'Other', config: { shared_token: 'another-secret-1' } },
      })
    ).body;
    const token = c.provider.webhook_url.split('/api/hooks/')[1];
    await s.request('DELETE', `/api/providers/${c.provider.id}`, { token: u });
    await s.request('DELETE', `/api/actions/${c.digestAction.id}`, { token: u });
    await s.service.core.db.run('UPDATE providers SET webhook_token = ? WHERE id = ?', [token, other.id]);
    for (const mode of ['overwrite', 'fail']) {
      const r = await upload(s.url, s.admin.token, backup, `conflict_mode=${mode}`);
      t.equal(r.status, 409, mode);
      t.match(r.body.detail, /webhook token belongs to provider/);
    }
    const r = await upload(s.url, s.admin.token, backup, 'conflict_mode=skip');
    t.equal(r.status, 201);
    t.match(r.body.summary.skipped, [
      { table: 'trackers', id: c.tracker.id, reason: /provider was not restored/ },
      { table: 'tracker_targets', id: `${c.tracker.id}/${c.target.id}`, reason: /tracker or target was not restored/ },
      { table: 'actions', id: c.digestAction.id, reason: /tracker/ },
    ]);
    s = await reboot(t, s);
    t.equal((await s.request('GET', `/api/providers/${c.provider.id}`, { token: u })).status, 404, 'kept out');
    t.equal(
      (await s.request('GET', `/api/providers/${other.id}`, { token: u })).body.name,
      'Other',
      'the holder is untouched',
    );
    t.equal(
      (await s.request('GET', `/api/actions/${c.digestAction.id}`, { token: u })).status,
      404,
      'what needs the tracker is kept out too',
    );
  },
);

t.test('exclude backups: missing secrets are taken from the stored record', async (t) => {
  let s = await boot(t);
  t.teardown(() => s.stop());
  const c = await configure(s);
  const backup = JSON.stringify(await exportNow(s, 'exclude'));
  await s.request('PATCH', `/api/providers/${c.provider.id}`, { token: c.user.token, body: { name: 'Renamed' } });
  t.equal((await upload(s.url, s.admin.token, backup, 'conflict_mode=overwrite')).status, 201);
  s = await reboot(t, s);
  const row = (await s.service.core.db.get('SELECT * FROM providers WHERE id = ?', [c.provider.id]))!;
  t.equal(row.name, 'Example source');
  const { atRest } = s.service.core;
  const config = Db.json<Record<string, string>>(row.config, {});
  t.match(config.shared_token, /^enc:v1:/, 'stored sealed');
  t.same(
    atRest.openConfig(config, ['shared_token']),
    { shared_token: SECRETS.shared, label: 'north' },
    'the stored secret is kept',
  );
  t.equal(row.webhook_token, c.provider.webhook_url.split('/api/hooks/')[1], 'the webhook token is kept');
  t.ok(Db.bool(row.enabled));
  const bot = (await s.service.core.db.get<{ token: string }>('SELECT token FROM bots WHERE id = ?', [c.botId]))!;
  t.match(bot.token, /^enc:v1:/, 'the bot token stays sealed');
  t.equal(atRest.open(bot.token), SECRETS.bot);
  t.equal(
    (await s.request('POST', '/api/auth/login', { body: { email: c.user.email, password: 'user password 1' } })).status,
    200,
    'the password hash is kept',
  );
});

t.test('exclude backups into a fresh service: records without their secrets are restored disabled', async (t) => {
  const src = await boot(t);
  const c = await configure(src);
  const backup = JSON.stringify(await exportNow(src, 'exclude'));
  await src.stop();
  let s = await boot(t);
  t.teardown(() => s.stop());
  const r = await upload(s.url, s.admin.token, backup, 'conflict_mode=overwrite');
  t.equal(r.status, 201);
  t.same(
    r.body.summary.disabled.map((d: any) => d.table).sort(),
    ['bots', 'providers', 'targets', 'users'],
    'reported before anything happens',
  );
  t.ok(r.body.summary.disabled.every((d: any) => d.reason === 'secret missing from backup'));
  s = await reboot(t, s);
  const db = s.service.core.db;
  const p = (await db.get('SELECT * FROM providers WHERE id = ?', [c.provider.id]))!;
  t.notOk(Db.bool(p.enabled), 'provider disabled');
  t.equal(p.status, 'disabled');
  t.equal(p.status_detail, 'secret missing from backup');
  t.same(Db.json(p.config, {}), { label: 'north' });
  t.not(p.webhook_token, c.provider.webhook_url.split('/api/hooks/')[1], 'a fresh webhook token');
  const target = (await db.get('SELECT * FROM targets WHERE id = ?', [c.target.id]))!;
  t.notOk(Db.bool(target.enabled));
  t.equal(target.last_error, 'secret missing from backup');
  const bot = (await db.get('SELECT * FROM bots WHERE id = ?', [c.botId]))!;
  t.equal(bot.status, 'auth_failed', 'the bot does not start');
  t.equal(bot.status_detail, 'secret missing from backup');
  const user = (await db.get('SELECT * FROM users WHERE email = ?', [c.user.email]))!;
  t.notOk(Db.bool(user.is_active), 'the user without a password is inactive');
  t.equal(
    (await s.request('POST', '/api/auth/login', { body: { email: c.user.email, password: 'user password 1' } })).status,
    401,
  );
  t.ok(
    Db.bool((await db.get('SELECT is_active FROM users WHERE email = ?', [s.admin.email]))!.is_active),
    'the restoring administrator is untouched',
  );
  const tracker = (await db.get('SELECT * FROM trackers WHERE id = ?', [c.tracker.id]))!;
  t.ok(Db.bool(tracker.enabled), 'records without secrets are restored as they were');
});

t.test('a restore may not leave the service without an active administrator', async (t) => {
  const s = await boot(t);
  t.teardown(() => s.stop());
  const e = await exportNow(s, 'include');
  e.configuration.users[0].is_active = false;
  const { checksumOf } = await import('../../core/src/backup/envelope.ts');
  e.checksum = checksumOf(e.configuration);
  const r = await upload(s.url, s.admin.token, JSON.stringify(e), 'conflict_mode=overwrite');
  t.equal(r.status, 409);
  t.equal(r.body.code, 'no_admin_left');
  t.equal(
    (await upload(s.url, s.admin.token, JSON.stringify(e), 'conflict_mode=skip')).status,
    201,
    'skip keeps the administrator as is',
  );
});

t.test('records of plugin kinds this service lacks are skipped with a reason', async (t) => {
  const s = await boot(t);
  t.teardown(() => s.stop());
  const e = await exportNow(s, 'include');
  const owner = e.configuration.users[0].id;
  const now = new Date().toISOString();
  e.configuration.providers.push({
    ...e.configuration.providers[0],
    id: '01900000-0000-7000-8000-0000000000b1',
    kind: 'immich',
    name: 'Photos',
    config: { url: 'http://x' },
    webhook_token: 'x'.repeat(43),
    user_id: owner,
  });
  e.configuration.trackers.push({
    id: '01900000-0000-7000-8000-0000000000b2',
    user_id: owner,
    provider_id: '01900000-0000-7000-8000-0000000000b1',
    name: 'Album',
    enabled: true,
    event_types: {},
    quiet_hours: null,
    quiet_policies: {},
    config: {},
    created_at: now,
    updated_at: now,
  });
  const { checksumOf } = await import('../../core/src/backup/envelope.ts');
  e.checksum = checksumOf(e.configuration);
  const r = await upload(s.url, s.admin.token, JSON.stringify(e), 'conflict_mode=fail');
  t.equal(r.status, 201);
  t.match(r.body.summary.skipped, [
    {
      table: 'providers',
      id: '01900000-0000-7000-8000-0000000000b1',
      reason: 'provider kind "immich" is not enabled on this service',
    },
    { table: 'trackers', id: '01900000-0000-7000-8000-0000000000b2', reason: /provider is skipped/ },
  ]);
});
