/**
 * Every move of the staged-restore state table, with an in-process service that is stopped and
 * booted again on the same data directory for "next boot".
 */

import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t from 'tap';
import { TEST_DB, type TestService, testDatabaseUrl } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';
import { configure, exportNow, servicesWith, upload } from './support.ts';

const key = crypto.randomBytes(32).toString('hex');
const { boot, reboot } = servicesWith({ SERVICE_SECRET_KEY: key });

/** Runs SQL on the database of a stopped service (its SQLite file or its PostgreSQL database). */
async function onStopped(dataDir: string, sqlite: string, postgres: string): Promise<void> {
  if (TEST_DB === 'sqlite') {
    const { default: Sqlite } = await import('better-sqlite3');
    const db = new Sqlite(path.join(dataDir, 'herald.db'));
    try {
      db.exec(sqlite);
    } finally {
      db.close();
    }
    return;
  }
  const pg = (await import('pg')).default;
  const c = new pg.Client({ connectionString: await testDatabaseUrl(dataDir) });
  await c.connect();
  try {
    await c.query(postgres);
  } finally {
    await c.end();
  }
}

/** Makes every insert into templates fail (the last step of a restore plan), and undoes it. */
const breakTemplates = (dir: string) =>
  onStopped(
    dir,
    `CREATE TRIGGER boom BEFORE INSERT ON templates BEGIN SELECT RAISE(ABORT, 'boom'); END; DELETE FROM templates;`,
    `CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'boom'; END $$;
   CREATE TRIGGER boom BEFORE INSERT ON templates FOR EACH ROW EXECUTE FUNCTION boom(); DELETE FROM templates;`,
  );
const repairTemplates = (dir: string) =>
  onStopped(dir, 'DROP TRIGGER boom', 'DROP TRIGGER boom ON templates; DROP FUNCTION boom();');

const restoreFiles = (s: TestService) =>
  fs.existsSync(path.join(s.dataDir, 'restore')) ? fs.readdirSync(path.join(s.dataDir, 'restore')).sort() : [];
const sameOrigin = (s: TestService) => ({ origin: s.url, referer: `${s.url}/settings/backup` });

t.test('none → staged → none; apply-restart when not supervised leaves it staged', async (t) => {
  const s = await boot(t, undefined, { SERVICE_SUPERVISED: 'false' });
  t.teardown(() => s.stop());
  await configure(s);
  const a = s.admin.token;
  const backup = JSON.stringify(await exportNow(s, 'include'));

  t.equal((await s.request('GET', '/api/backup/pending-restore', { token: a })).status, 204, 'none: nothing to show');
  t.equal(
    (await s.request('DELETE', '/api/backup/pending-restore', { token: a })).status,
    404,
    'none: nothing to cancel',
  );
  t.equal(
    (await s.request('POST', '/api/backup/apply-restart', { token: a, headers: sameOrigin(s) })).status,
    404,
    'none: nothing to apply',
  );

  const staged = await upload(s.url, a, backup, 'conflict_mode=skip');
  t.equal(staged.status, 201, 'none → staged');
  t.match(staged.body, {
    state: 'staged',
    conflict_mode: 'skip',
    staged_at: String,
    source: { filename: 'backup.json', size_bytes: Buffer.byteLength(backup), sha256: /^[0-9a-f]{64}$/ },
    backup: { format_version: 1, service_version: '0.1.0', secrets_mode: 'include' },
  });
  t.ok(staged.body.summary.counts.providers.unchanged >= 2, 'the summary counts what would happen');
  t.notOk('envelope' in staged.body, 'the answer does not carry the configuration');
  const pending = path.join(s.dataDir, 'restore', 'pending.json');
  t.equal(fs.statSync(pending).mode & 0o777, 0o600, 'the pending file is owner-only');
  t.equal(JSON.parse(fs.readFileSync(pending, 'utf8')).conflict_mode, 'skip', 'it records its conflict mode');

  const again = await upload(s.url, a, backup, 'conflict_mode=overwrite');
  t.equal(again.status, 409, 'one staged restore at a time');
  t.equal(again.body.code, 'restore_already_staged');

  const shown = await s.request('GET', '/api/backup/pending-restore', { token: a });
  t.equal(shown.status, 200);
  t.same(shown.body, staged.body, 'GET shows what was staged');

  const notSupervised = await s.request('POST', '/api/backup/apply-restart', { token: a, headers: sameOrigin(s) });
  t.equal(notSupervised.status, 409, 'staged → staged when not supervised');
  t.equal(notSupervised.body.code, 'not_supervised');
  t.equal((await s.request('GET', '/api/backup/pending-restore', { token: a })).status, 200, 'still staged');

  t.equal((await s.request('DELETE', '/api/backup/pending-restore', { token: a })).status, 204, 'staged → none');
  t.equal((await s.request('GET', '/api/backup/pending-restore', { token: a })).status, 204);
  t.notOk(fs.existsSync(pending), 'the staged file is removed');

  // Several replicas booting on one data folder: the first to claim the file applies it, the others see nothing.
  t.equal((await upload(s.url, a, backup, 'conflict_mode=skip')).status, 201);
  const { applyStagedRestore } = await import('../../core/src/backup/staged.ts');
  const outcomes = await Promise.all([applyStagedRestore(s.service.core), applyStagedRestore(s.service.core)]);
  t.same(outcomes.sort(), ['applied', 'none']);
  t.match(restoreFiles(s), [/^applied-/]);
  // A claim left behind by a process that died mid-way is reported, not applied again.
  fs.writeFileSync(path.join(s.dataDir, 'restore', 'applying-20240101T000000000Z-dead.json'), '{}');
  t.equal(await applyStagedRestore(s.service.core), 'none');
  t.ok(
    s
      .logs()
      .some(
        (l) =>
          l.level === 'warn' && /interrupted/.test(l.msg) && l.files[0] === 'applying-20240101T000000000Z-dead.json',
      ),
    'the leftover is reported',
  );
});

t.test(
  'apply-restart: same-origin only, then 202 and a restart after the answer; next boot applies and archives',
  async (t) => {
    let s = await boot(t, undefined, { SERVICE_SUPERVISED: 'true' });
    t.teardown(() => s.stop());
    const c = await configure(s);
    const a = s.admin.token;
    const backup = JSON.stringify(await exportNow(s, 'include'));
    // Change the running configuration so the restore has something to put back.
    await s.request('PATCH', `/api/providers/${c.provider.id}`, { token: c.user.token, body: { name: 'Renamed' } });
    await s.request('DELETE', `/api/actions/${c.messageAction.id}`, { token: c.user.token });
    t.equal((await upload(s.url, a, backup, 'conflict_mode=overwrite')).status, 201);

    let restarts = 0;
    // Like main.ts: a restart is a graceful stop (a supervisor would start the process again).
    s.service.core.services.set('requestRestart', () => {
      restarts++;
      void s.service.stop();
    });
    const h = sameOrigin(s);
    const other = 'http://evil.example.test';
    const host = new URL(s.url).host;
    const refused: [string, Record<string, string>][] = [
      ['no Origin or Referer', {}],
      ['no Referer', { origin: h.origin }],
      ['no Origin', { referer: h.referer }],
      ['Origin null', { origin: 'null', referer: h.referer }],
      ['another Origin', { origin: other, referer: h.referer }],
      ['another Referer', { origin: h.origin, referer: `${other}/x` }],
      ['another port', { origin: `http://127.0.0.1:1`, referer: h.referer }],
      ['another scheme', { origin: `https://${host}`, referer: `https://${host}/` }],
      ['a host that only starts the same', { origin: `${h.origin}.evil.test`, referer: h.referer }],
    ];
    for (const [why, headers] of refused) {
      const r = await s.request('POST', '/api/backup/apply-restart', { token: a, headers });
      t.equal(r.status, 403, why);
    }
    // A forged Host naming the attacker's site, with Origin and Referer to match: the service's own
    // origins come from its configuration, never from the request.
    const forged = await new Promise<number>((resolve, reject) => {
      const u = new URL(s.url);
      const req = http.request(
        {
          host: u.hostname,
          port: u.port,
          method: 'POST',
          path: '/api/backup/apply-restart',
          headers: {
            host: 'evil.example.com',
            origin: 'http://evil.example.com',
            referer: 'http://evil.example.com/',
            authorization: `Bearer ${a}`,
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    t.equal(forged, 403, 'a forged Host header does not make another site same-origin');
    const fwd = await s.request('POST', '/api/backup/apply-restart', {
      token: a,
      headers: { origin: `https://${host}`, referer: `https://${host}/`, 'x-forwarded-proto': 'https' },
    });
    t.equal(fwd.status, 202, 'https from a trusted proxy (X-Forwarded-Proto from 127.0.0.1) is same-origin');
    t.same(fwd.body, { state: 'restarting' });
    // Until the restart is requested, not a fixed 100 ms (which a loaded machine could outlast).
    await waitFor('the restart to be requested', () => restarts > 0);
    t.equal(restarts, 1, 'restart requested once the answer was sent');
    t.ok(fs.existsSync(path.join(s.dataDir, 'restore', 'pending.json')), 'still staged until the next boot');

    s = await reboot(t, s, { SERVICE_SUPERVISED: 'true' });
    t.equal(
      (await s.request('GET', '/api/backup/pending-restore', { token: a })).status,
      204,
      'staged → applied: nothing pending',
    );
    const files = restoreFiles(s);
    t.equal(files.length, 1);
    t.match(files[0], /^applied-\d{8}T\d{9}Z\.json$/, 'the payload is archived');
    t.equal(
      (await s.request('GET', `/api/providers/${c.provider.id}`, { token: c.user.token })).body.name,
      'Example source',
      'the restored name',
    );
    t.equal(
      (await s.request('GET', `/api/actions/${c.messageAction.id}`, { token: c.user.token })).status,
      200,
      'the deleted action is back',
    );
    t.ok(
      s.logs().some((l) => l.msg === 'staged restore applied' && l.totals.replaced >= 1 && l.totals.created >= 1),
      'the application is logged',
    );
  },
);

t.test('a restore that fails at boot is rolled back and set aside; boot continues unchanged', async (t) => {
  let s = await boot(t);
  t.teardown(() => s.stop());
  const c = await configure(s);
  const a = s.admin.token;
  const backup = await exportNow(s, 'include');
  // A backup that would create records (a second target and template) and then hit a failing insert.
  const extra = structuredClone(backup);
  extra.configuration.targets.push({
    ...extra.configuration.targets[0],
    id: '01900000-0000-7000-8000-0000000000aa',
    name: 'New target',
  });
  const { checksumOf } = await import('../../core/src/backup/envelope.ts');
  extra.checksum = checksumOf(extra.configuration);
  await s.request('DELETE', `/api/trackers/${c.tracker.id}`, { token: c.user.token });
  t.equal((await upload(s.url, a, JSON.stringify(extra), 'conflict_mode=overwrite')).status, 201);
  const before = (await exportNow(s)).configuration;
  await s.stop();
  // Make the last step of the plan fail inside the transaction.
  await breakTemplates(s.dataDir);
  s = await boot(t, s.dataDir);
  s.admin = { ...s.admin, token: a };
  const files = restoreFiles(s);
  t.equal(files.length, 1);
  t.match(files[0], /^failed-\d{8}T\d{9}Z\.json$/, 'the payload is moved aside');
  t.equal((await s.request('GET', '/api/backup/pending-restore', { token: a })).status, 204);
  const after = (await exportNow(s)).configuration;
  t.same(after, { ...before, templates: [] }, 'nothing of the restore stayed: the transaction rolled back');
  t.equal(after.targets.length, 1, 'the new target is not there');
  t.notOk(
    after.trackers.some((x: any) => x.id === c.tracker.id),
    'the deleted tracker is not back',
  );
  const err = s.logs().find((l) => l.msg?.startsWith('staged restore failed'));
  t.ok(err, 'the failure is logged');
  t.equal(err.level, 'error', 'as an error');
  t.match(err.reason, /boom/);
  t.equal((await s.request('GET', '/api/health')).status, 200, 'the service runs');

  // A conflict that appears between staging and boot fails a "fail" restore the same way.
  await s.stop();
  await repairTemplates(s.dataDir);
  s = await boot(t, s.dataDir);
  const same = await exportNow({ ...s, admin: { ...s.admin, token: a } } as TestService, 'include');
  t.equal((await upload(s.url, a, JSON.stringify(same), 'conflict_mode=fail')).status, 201, 'no conflicts when staged');
  await s.request('PATCH', `/api/providers/${c.provider.id}`, {
    token: c.user.token,
    body: { name: 'Changed after staging' },
  });
  s.admin = { ...s.admin, token: a };
  s = await reboot(t, s);
  t.equal(restoreFiles(s).filter((f) => f.startsWith('failed-')).length, 2, 'set aside');
  t.equal(
    (await s.request('GET', `/api/providers/${c.provider.id}`, { token: c.user.token })).body.name,
    'Changed after staging',
    'untouched',
  );
  t.match(s.logs().find((l) => l.msg?.startsWith('staged restore failed'))?.reason, /conflict_mode is "fail"/);
});
