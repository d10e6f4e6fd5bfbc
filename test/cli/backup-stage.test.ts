/**
 * `herald backup stage` and `unstage` with the service stopped (an instance whose web client cannot
 * be reached), on its SQLite file or PostgreSQL database: the backup checked and planned as
 * prepare-restore does, one staged restore at a time, and the service's next start applying it.
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { configure } from '../backup/support.ts';
import { startService } from '../helpers/service.ts';
import { herald, serviceEnv } from './support.ts';

t.test('stage with the service stopped; the next start applies it', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-cli-stage-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  let s = await startService({}, { dataDir });
  t.teardown(() => s.stop());
  const admin = s.admin;
  const c = await configure(s);
  const env = await serviceEnv(dataDir);
  const made = await herald(['backup', 'create', '--secrets', 'include'], env);
  t.equal(made.code, 0, made.stderr);
  const file = /^Backup written: (\S+) /.exec(made.stdout)![1]!;

  // Changes made after the backup, which the restore undoes.
  t.equal(
    (
      await s.request('PATCH', `/api/providers/${c.provider.id}`, {
        token: c.user.token,
        body: { name: 'Renamed after the backup' },
      })
    ).status,
    200,
  );
  t.equal((await s.request('DELETE', `/api/targets/${c.target.id}`, { token: c.user.token })).status, 204);
  await s.stop();

  const staged = await herald(['backup', 'stage', file!, '--conflict-mode', 'overwrite'], env);
  t.equal(staged.code, 0, staged.stderr);
  t.match(
    staged.stdout,
    new RegExp(
      `^The restore of ${file!.replace(/[.]/g, '\\.')} \\(made .*\\) is staged, conflict mode overwrite\\.\\nIt ` +
        `will create [1-9]\\d*, replace [1-9]\\d*, `,
    ),
  );
  t.match(staged.stdout, /\nIt is applied when the service next starts: restart it/);
  const pending = path.join(dataDir, 'restore', 'pending.json');
  t.equal(fs.statSync(pending).mode & 0o777, 0o600, 'the pending file is owner-only');
  t.match(JSON.parse(fs.readFileSync(pending, 'utf8')), {
    state: 'staged',
    staged_by: 'command-line',
    conflict_mode: 'overwrite',
    source: { filename: path.basename(file!) },
  });

  const twice = await herald(['backup', 'stage', file!], env);
  t.equal(twice.code, 1);
  t.equal(
    twice.stderr,
    'herald: a restore is staged already; cancel it (herald backup unstage) before staging another.\n',
  );
  t.match(
    (await herald(['backup', 'list'], env)).stdout,
    /\nA restore is staged \(backup-\d+T\d+Z\.json, staged .*, conflict mode overwrite\)/,
  );
  const cancelled = await herald(['backup', 'unstage'], env);
  t.equal(cancelled.stdout, 'The staged restore is cancelled.\n');
  t.notOk(fs.existsSync(pending), 'unstaged');
  t.equal((await herald(['backup', 'stage', file!, '--conflict-mode', 'overwrite'], env)).code, 0, 'staged again');

  s = await startService({}, { dataDir, setup: false });
  s.admin = admin;
  t.match(
    s.logs().find((l) => l.msg === 'staged restore applied'),
    { conflict_mode: 'overwrite' },
    'applied at boot',
  );
  const login = await s.request('POST', '/api/auth/login', {
    body: { email: c.user.email, password: 'user password 1' },
  });
  t.equal(login.status, 200);
  const mine = await s.request('GET', `/api/providers/${c.provider.id}`, { token: login.body.access_token });
  t.equal(mine.body.name, c.provider.name, "the provider's name is back");
  t.equal(
    (await s.request('GET', `/api/targets/${c.target.id}`, { token: login.body.access_token })).status,
    200,
    'the deleted target is back',
  );
  t.ok(
    fs.readdirSync(path.join(dataDir, 'restore')).some((f) => /^applied-.*\.json$/.test(f)),
    'archived as applied',
  );

  const nothing = await herald(['backup', 'unstage'], env);
  t.equal(nothing.code, 1);
  t.equal(nothing.stderr, 'herald: no restore is staged.\n');
});
