import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { checksumOf } from '../../core/src/backup/envelope.ts';
import { startService } from '../helpers/service.ts';
import { configure, SECRETS } from './support.ts';

const NAME = /^backup-\d{8}T\d{6}\d{3}Z\.json$/;

t.test('every backup route needs an administrator', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const user = await s.user();
  const routes: [string, string][] = [
    ['POST', '/api/backup/files'],
    ['GET', '/api/backup/files'],
    ['GET', '/api/backup/files/backup-20240101T000000000Z.json'],
    ['GET', '/api/backup/export'],
    ['GET', '/api/backup/scheduled'],
    ['PUT', '/api/backup/scheduled'],
    ['POST', '/api/backup/prepare-restore'],
    ['GET', '/api/backup/pending-restore'],
    ['DELETE', '/api/backup/pending-restore'],
    ['POST', '/api/backup/apply-restart'],
  ];
  for (const [method, p] of routes) {
    const body = method === 'PUT' ? { backup_scheduled_enabled: 'true' } : undefined;
    t.equal((await s.request(method, p, { body })).status, 401, `${method} ${p} without a token`);
    t.equal((await s.request(method, p, { body, token: 'not-a-jwt' })).status, 401, `${method} ${p} with a bad token`);
    t.equal((await s.request(method, p, { body, token: user.token })).status, 403, `${method} ${p} as a plain user`);
  }
  t.equal(
    (await s.request('GET', '/api/backup/scheduled', { token: s.admin.token })).body.backup_scheduled_enabled,
    'false',
    'nothing was changed by the refused PUTs',
  );
  t.same(
    fs.existsSync(path.join(s.dataDir, 'backups')) ? fs.readdirSync(path.join(s.dataDir, 'backups')) : [],
    [],
    'no file was written',
  );
});

t.test('backup files: write, list, download; secrets only with include', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const c = await configure(s);
  const a = s.admin.token;

  const ex = await s.request('POST', '/api/backup/files', { token: a });
  t.equal(ex.status, 201);
  t.match(ex.body, { filename: NAME, size_bytes: Number, created_at: String, secrets_mode: 'exclude' });
  const file = path.join(s.dataDir, 'backups', ex.body.filename);
  t.equal(fs.statSync(file).size, ex.body.size_bytes);
  t.equal(fs.statSync(file).mode & 0o777, 0o600, 'owner-only file');
  const text = fs.readFileSync(file, 'utf8');
  const hash = (await s.service.core.db.get<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = ?', [
    s.admin.id,
  ]))!.password_hash;
  const pathId = (await s.service.core.db.get<{ webhook_path_id: string }>(
    'SELECT webhook_path_id FROM bots WHERE id = ?',
    [c.botId],
  ))!.webhook_path_id;
  for (const secret of [
    SECRETS.shared,
    SECRETS.api,
    SECRETS.bot,
    c.provider.webhook_url.split('/api/hooks/')[1],
    hash,
    pathId,
  ])
    t.notOk(text.includes(secret), 'no secret in an exclude backup');
  const env = JSON.parse(text);
  t.equal(env.checksum, checksumOf(env.configuration));
  const p = env.configuration.providers.find((x: any) => x.id === c.provider.id);
  t.same(p.secrets_omitted.sort(), ['/config/shared_token', '/webhook_token']);
  t.same(p.config, { label: 'north' });
  t.same(env.configuration.targets[0].secrets_omitted, ['/config/api_token']);
  t.same(
    env.configuration.bots[0].secrets_omitted,
    ['/token', '/webhook_path_id'],
    "the bot's token and webhook path (a routing secret) are left out",
  );
  t.notOk('webhook_path_id' in env.configuration.bots[0]);
  t.ok(
    env.configuration.users.every(
      (u: any) => u.password_hash === undefined && u.secrets_omitted[0] === '/password_hash',
    ),
  );
  for (const k of [
    'event_log',
    'deferred_dispatch',
    'deliveries',
    'webhook_payload_log',
    'chats',
    'chat_messages',
    'memory_entries',
    'documents',
    'reports',
  ])
    t.notOk(k in env.configuration, `no ${k}`);

  const inc = await s.request('POST', '/api/backup/files?secrets_mode=include', { token: a });
  t.equal(inc.status, 201);
  t.equal(inc.body.secrets_mode, 'include');
  const incText = fs.readFileSync(path.join(s.dataDir, 'backups', inc.body.filename), 'utf8');
  for (const secret of [c.provider.webhook_url.split('/api/hooks/')[1], hash, pathId])
    t.ok(incText.includes(secret), 'the include backup carries the secret');
  // Plugin secrets and bot tokens travel sealed, as stored: the same key opens them.
  const incEnv = JSON.parse(incText);
  const { atRest } = s.service.core;
  for (const [sealed, secret] of [
    [incEnv.configuration.providers.find((x: any) => x.id === c.provider.id).config.shared_token, SECRETS.shared],
    [incEnv.configuration.targets[0].config.api_token, SECRETS.api],
    [incEnv.configuration.bots[0].token, SECRETS.bot],
  ]) {
    t.match(sealed, /^enc:v1:/, 'sealed in the include backup');
    t.equal(atRest.open(sealed), secret, 'the include backup carries the secret');
    t.notOk(incText.includes(secret), 'never in clear');
  }

  const list = await s.request('GET', '/api/backup/files', { token: a });
  t.same(
    list.body.files.map((f: any) => f.filename),
    [inc.body.filename, ex.body.filename].sort().reverse(),
    'newest first',
  );
  t.match(list.body.files[0], { filename: NAME, size_bytes: Number, created_at: String });

  const got = await s.request('GET', `/api/backup/files/${ex.body.filename}`, { token: a });
  t.equal(got.status, 200);
  t.equal(got.text, text);
  t.match(got.headers.get('content-disposition'), `attachment; filename="${ex.body.filename}"`);

  const bad = await s.request('POST', '/api/backup/files?secrets_mode=everything', { token: a });
  t.equal(bad.status, 422);
  t.equal(bad.headers.get('content-type'), 'application/problem+json; charset=utf-8');
});

t.test('export downloads an envelope without secrets unless include', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  await configure(s);
  const r = await s.request('GET', '/api/backup/export', { token: s.admin.token });
  t.equal(r.status, 200);
  t.match(r.headers.get('content-disposition'), /^attachment; filename="backup-\d{8}T\d{9}Z\.json"$/);
  t.equal(r.body.secrets_mode, 'exclude');
  t.equal(r.body.checksum, checksumOf(r.body.configuration));
  t.notOk(r.text.includes(SECRETS.shared));
  const inc = await s.request('GET', '/api/backup/export?secrets_mode=include', { token: s.admin.token });
  const { atRest } = s.service.core;
  const openedText = JSON.stringify(inc.body, (_k, v) =>
    typeof v === 'string' && v.startsWith('enc:v1:') ? atRest.open(v) : v,
  );
  t.ok(
    openedText.includes(SECRETS.shared) && openedText.includes(SECRETS.api) && openedText.includes(SECRETS.bot),
    'include carries the secrets, sealed',
  );
  t.notOk(
    inc.text.includes(SECRETS.shared) || inc.text.includes(SECRETS.api) || inc.text.includes(SECRETS.bot),
    'none in clear',
  );
  t.same(
    (await s.request('GET', '/api/backup/export?secrets_mode=include', { token: s.admin.token })).body.configuration,
    inc.body.configuration,
    'two exports of the same data are identical',
  );
  t.same(
    fs.existsSync(path.join(s.dataDir, 'backups')) ? fs.readdirSync(path.join(s.dataDir, 'backups')) : [],
    [],
    'export stores nothing',
  );
});

t.test('only stored backups can be downloaded: traversal and other names are 404', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const a = s.admin.token;
  const real = (await s.request('POST', '/api/backup/files', { token: a })).body.filename;
  fs.writeFileSync(path.join(s.dataDir, 'backups', 'notes.json'), '{"secret": true}');
  fs.writeFileSync(path.join(s.dataDir, 'secret.json'), '{"secret": true}');
  const names = [
    '..%2Fherald.db',
    '..%2F..%2F..%2Fetc%2Fpasswd',
    '%2E%2E%2Fsecret.json',
    'notes.json',
    'herald.db',
    `${real}.bak`,
    `x${real}`,
    'backup-20990101T000000000Z.json',
    'backup-2024-01-01.json',
    encodeURIComponent(`../backups/${real}`),
    `..%5C${real}`,
    `${real}%00`,
  ];
  for (const n of names) {
    const r = await s.request('GET', `/api/backup/files/${n}`, { token: a });
    t.equal(r.status, 404, n);
    t.notOk(r.text.includes('"secret"'), `nothing of another file leaks for ${n}`);
  }
  const raw = await fetch(`${s.url}/api/backup/files/../../herald.db`, { headers: { authorization: `Bearer ${a}` } });
  t.not(raw.status, 200, 'a dot-dot path is never served');
  t.equal((await s.request('GET', `/api/backup/files/${real}`, { token: a })).status, 200, 'the stored one is');
});

t.test('the backup schedule: defaults, validation, save', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const a = s.admin.token;
  const defaults = {
    backup_scheduled_enabled: 'false',
    backup_scheduled_interval_hours: '24',
    backup_secrets_mode: 'exclude',
    backup_retention_count: '7',
  };
  t.same((await s.request('GET', '/api/backup/scheduled', { token: a })).body, defaults);
  const bad: Record<string, unknown>[] = [
    { backup_scheduled_enabled: 'yes' },
    { backup_scheduled_enabled: true },
    { backup_scheduled_enabled: 'TRUE' },
    { backup_scheduled_interval_hours: '0' },
    { backup_scheduled_interval_hours: '8761' },
    { backup_scheduled_interval_hours: '1.5' },
    { backup_scheduled_interval_hours: '-1' },
    { backup_scheduled_interval_hours: 24 },
    { backup_scheduled_interval_hours: '024' },
    { backup_retention_count: '0' },
    { backup_retention_count: '1001' },
    { backup_secrets_mode: 'all' },
    { backup_secrets_mode: '' },
    { backup_other: '1' },
    {},
    { backup_scheduled_enabled: 'true', backup_retention_count: 'x' },
  ];
  for (const body of bad) {
    const r = await s.request('PUT', '/api/backup/scheduled', { token: a, body });
    t.equal(r.status, 422, JSON.stringify(body));
  }
  t.same(
    (await s.request('GET', '/api/backup/scheduled', { token: a })).body,
    defaults,
    'nothing saved by refused bodies',
  );
  const good = {
    backup_scheduled_enabled: 'true',
    backup_scheduled_interval_hours: '8760',
    backup_secrets_mode: 'include',
    backup_retention_count: '1000',
  };
  const r = await s.request('PUT', '/api/backup/scheduled', { token: a, body: good });
  t.equal(r.status, 200);
  t.same(r.body, good);
  t.same(
    (await s.request('PUT', '/api/backup/scheduled', { token: a, body: { backup_retention_count: '1' } })).body,
    { ...good, backup_retention_count: '1' },
    'a partial body changes only what it names',
  );
});
