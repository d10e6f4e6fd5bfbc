/**
 * The round trip: configure a service, back it up, restore the backup into a fresh data directory
 * through prepare-restore and a real restart of a supervised process (`main.ts` as a child, this
 * test restarting it on exit code 75), then compare the configuration field by field. Both run
 * with the same SERVICE_SECRET_KEY, which is what an include backup (its secrets sealed) needs.
 */

import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import t from 'tap';
import { SecretsAtRest } from '../../core/src/secrets/at-rest.ts';
import { startService, TEST_DB, TEST_PLUGINS, testDatabaseUrl } from '../helpers/service.ts';
import { SupervisedChild } from './child.ts';
import { configure, SECRETS, upload } from './support.ts';

const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };

async function call(
  url: string,
  method: string,
  p: string,
  token?: string,
  headers: Record<string, string> = {},
  body?: unknown,
) {
  const res = await fetch(url + p, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* text */
  }
  return { status: res.status, body: parsed, text };
}

/** Opens every sealed secret (an include backup carries them sealed, with a fresh IV after each restore). */
function opened(config: any, atRest: SecretsAtRest): any {
  return JSON.parse(JSON.stringify(config), (_k, v) =>
    typeof v === 'string' && v.startsWith('enc:v1:') ? atRest.open(v) : v,
  );
}

/** Replaces ids (as whole strings anywhere) and sorts records, so two configurations compare field by field. */
function normalize(config: any, ids: Map<string, string>): any {
  let text = JSON.stringify(config);
  for (const [from, to] of ids) text = text.split(from).join(to);
  const c = JSON.parse(text);
  const by = (k: string) => (a: any, b: any) => String(a[k]).localeCompare(String(b[k]));
  for (const table of [
    'users',
    'providers',
    'trackers',
    'targets',
    'bots',
    'bot_chats',
    'actions',
    'templates',
    'skills',
  ])
    c[table].sort(by('id'));
  c.tracker_targets.sort((a: any, b: any) =>
    `${a.tracker_id}${a.target_id}`.localeCompare(`${b.tracker_id}${b.target_id}`),
  );
  c.personal_contexts.sort(by('user_id'));
  return c;
}

async function roundTrip(t: Test, mode: 'include' | 'exclude') {
  // 1. A configured service and its backup (written to a file and downloaded, as an operator would).
  const key = crypto.randomBytes(32).toString('hex');
  const atRest = new SecretsAtRest(key);
  const src = await startService({ SERVICE_SECRET_KEY: key });
  const configured = await configure(src);
  const file = (await src.request('POST', `/api/backup/files?secrets_mode=${mode}`, { token: src.admin.token })).body
    .filename;
  const backup = (await src.request('GET', `/api/backup/files/${file}`, { token: src.admin.token })).text;
  const original = (await src.request('GET', '/api/backup/export?secrets_mode=include', { token: src.admin.token }))
    .body.configuration;
  await src.stop();

  // 2. A fresh data directory, a supervised child process, first-run setup.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-roundtrip-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const databaseUrl = await testDatabaseUrl(dir);
  const child = new SupervisedChild({
    ...(databaseUrl ? { SERVICE_DATABASE_URL: databaseUrl } : {}),
    SERVICE_SECRET_KEY: key,
    SERVICE_DATA_DIR: dir,
    SERVICE_PORT: '0',
    SERVICE_HOST: '127.0.0.1',
    SERVICE_PLUGINS: TEST_PLUGINS,
    SERVICE_LOG_FORMAT: 'json',
    SERVICE_LOG_LEVEL: 'INFO',
    SERVICE_GRACEFUL_SHUTDOWN_SECONDS: '5',
    HERALD_BCRYPT_COST: '4',
  });
  t.teardown(() => child.stop());
  let url = await child.start();
  const setup = await call(url, 'POST', '/api/setup', undefined, {}, ADMIN);
  t.equal(setup.status, 201);
  let token = setup.body.access_token;
  const freshAdmin = setup.body.user.id;

  // 3. Stage, then apply with a restart.
  const staged = await upload(url, token, backup, 'conflict_mode=overwrite');
  t.equal(staged.status, 201, 'staged');
  t.equal(staged.body.backup.secrets_mode, mode);
  const restarted = child.nextStart();
  const apply = await call(url, 'POST', '/api/backup/apply-restart', token, {
    origin: url,
    referer: `${url}/settings`,
  });
  t.equal(apply.status, 202);
  t.same(apply.body, { state: 'restarting' });
  url = await restarted;
  t.same(child.exits, [75], 'the first process exited with 75 and was started again');
  if (TEST_DB === 'sqlite')
    t.match(
      child.stderr,
      /"msg":"pre-migration snapshot taken and verified"[^\n]*\n(?:.*\n)*?.*"msg":"staged restore applied"/,
      'snapshot first, then the restore',
    );
  else t.match(child.stderr, /"msg":"staged restore applied"/, 'the restore was applied');
  // With include the backup's password hash replaced the one set up here: the sessions from before end, as with any
  // password change.
  t.equal(
    (await call(url, 'GET', '/api/v1/users/me', token)).status,
    mode === 'include' ? 401 : 200,
    `the administrator's token ${mode === 'include' ? 'is revoked' : 'still works'}`,
  );
  token = (await call(url, 'POST', '/api/auth/login', undefined, {}, ADMIN)).body.access_token;
  t.equal((await call(url, 'GET', '/api/backup/pending-restore', token)).status, 204, 'nothing pending');
  const archived = fs.readdirSync(path.join(dir, 'restore'));
  t.match(archived, [/^applied-\d{8}T\d{9}Z\.json$/], 'archived');

  // 4. Compare: the fresh administrator, their bridge_self provider and its tracker stand for the originals.
  const restored = (await call(url, 'GET', '/api/backup/export?secrets_mode=include', token)).body.configuration;
  const originalAdmin = original.users.find((u: any) => u.email === ADMIN.email);
  const ids = new Map<string, string>([[freshAdmin, originalAdmin.id]]);
  const selfOf = (c: any, userId: string) =>
    c.providers.find((p: any) => p.kind === 'bridge_self' && p.user_id === userId);
  const fresh = selfOf(restored, freshAdmin);
  const orig = selfOf(original, originalAdmin.id);
  ids.set(fresh.id, orig.id);
  ids.set(
    restored.trackers.find((x: any) => x.provider_id === fresh.id).id,
    original.trackers.find((x: any) => x.provider_id === orig.id).id,
  );
  const got = normalize(opened(restored, atRest), ids);
  const want = normalize(opened(original, atRest), new Map());
  // Records matched to the fresh service's own keep their creation time and get a new update time.
  for (const c of [got, want]) {
    for (const r of [
      c.users.find((u: any) => u.id === originalAdmin.id),
      c.providers.find((p: any) => p.id === orig.id),
      c.trackers.find((x: any) => x.provider_id === orig.id),
    ]) {
      delete r.created_at;
      delete r.updated_at;
    }
  }
  if (mode === 'exclude') {
    // What an exclude backup cannot bring back: secrets, and with them the records that need them.
    const gotAdmin = got.users.find((u: any) => u.id === originalAdmin.id);
    t.ok(
      gotAdmin.password_hash &&
        gotAdmin.password_hash !== want.users.find((u: any) => u.id === originalAdmin.id).password_hash,
      'the administrator keeps the password set up here',
    );
    delete gotAdmin.password_hash;
    for (const u of want.users)
      if (u.id !== originalAdmin.id) {
        u.is_active = false;
      }
    for (const u of want.users) delete u.password_hash;
    for (const p of want.providers)
      if (p.kind === 'example') {
        delete p.config.shared_token;
        p.enabled = false;
      }
    for (const p of got.providers) {
      const w = want.providers.find((x: any) => x.id === p.id);
      if (p.id !== orig.id) t.not(p.webhook_token, w.webhook_token, `a fresh webhook token for ${p.kind}`);
      delete p.webhook_token;
      delete w.webhook_token;
    }
    for (const x of want.targets) {
      delete x.config.api_token;
      x.enabled = false;
    }
    for (const b of want.bots) delete b.token;
    // The webhook path is a routing secret too: the restored bot has a new one.
    for (const b of got.bots) {
      const w = want.bots.find((x: any) => x.id === b.id);
      t.match(b.webhook_path_id, /^[A-Za-z0-9_-]{40,}$/);
      t.not(b.webhook_path_id, w.webhook_path_id, 'a fresh webhook path for the bot');
      delete b.webhook_path_id;
      delete w.webhook_path_id;
    }
  }
  const sizes = (c: any) =>
    Object.fromEntries(Object.entries(c).map(([k, v]) => [k, Array.isArray(v) ? v.length : v === null ? 0 : 1]));
  t.match(
    sizes(want),
    {
      users: 2,
      providers: 3,
      trackers: 3,
      targets: 1,
      tracker_targets: 1,
      bots: 1,
      bot_chats: 1,
      actions: 2,
      templates: 1,
    },
    'the original has one of everything',
  );
  t.same(sizes(got), sizes(want), 'as many records of each kind');
  t.same(got, want, `the restored configuration equals the original, field by field (${mode})`);

  // 5. Secrets are present only with include, and sealed in the file.
  const text = JSON.stringify(opened(restored, atRest));
  for (const secret of [SECRETS.shared, SECRETS.api, SECRETS.bot])
    t.equal(
      text.includes(secret),
      mode === 'include',
      `${secret.slice(0, 12)}… ${mode === 'include' ? 'restored' : 'absent'}`,
    );
  for (const secret of [SECRETS.shared, SECRETS.api, SECRETS.bot])
    t.notOk(
      backup.includes(secret) || JSON.stringify(restored).includes(secret),
      `${secret.slice(0, 12)}… never in clear in a backup`,
    );
  const login = await call(
    url,
    'POST',
    '/api/auth/login',
    undefined,
    {},
    { email: configured.user.email, password: 'user password 1' },
  );
  t.equal(
    login.status,
    mode === 'include' ? 200 : 401,
    'the other user can log in only when the password hash travelled',
  );

  t.equal(await child.stop(), 0, 'clean stop');
}

t.test('round trip with secrets_mode=include', (t) => roundTrip(t, 'include'));
t.test('round trip with secrets_mode=exclude', (t) => roundTrip(t, 'exclude'));
