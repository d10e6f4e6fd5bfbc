import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startService } from '../helpers/service.ts';

t.test('stored backups can be deleted by an administrator, and only stored backups', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const a = s.admin.token;
  const user = await s.user();
  const dir = path.join(s.dataDir, 'backups');

  const first = (await s.request('POST', '/api/backup/files', { token: a })).body;
  const second = (await s.request('POST', '/api/backup/files', { token: a })).body;
  t.not(first.filename, second.filename);
  const names = async () =>
    (await s.request('GET', '/api/backup/files', { token: a })).body.files.map((f: { filename: string }) => f.filename);
  t.same((await names()).sort(), [first.filename, second.filename].sort(), 'two stored');

  t.equal((await s.request('DELETE', `/api/backup/files/${first.filename}`)).status, 401, 'no token');
  t.equal(
    (await s.request('DELETE', `/api/backup/files/${first.filename}`, { token: user.token })).status,
    403,
    'a plain user may not',
  );
  t.ok(fs.existsSync(path.join(dir, first.filename)), 'refused deletes removed nothing');

  // Files in and around the backup directory that are not stored backups are never reached.
  fs.writeFileSync(path.join(dir, 'notes.json'), '{}');
  fs.writeFileSync(path.join(s.dataDir, 'outside.json'), '{}');
  for (const name of [
    'notes.json',
    '..%2Foutside.json',
    '%2E%2E%2Foutside.json',
    `..%2Fbackups%2F${first.filename}`,
    'backup-20990101T000000000Z.json',
    `${first.filename}%00`,
    encodeURIComponent(`./${first.filename}`),
  ]) {
    const r = await s.request('DELETE', `/api/backup/files/${name}`, { token: a });
    t.equal(r.status, 404, `${name}: 404`);
    t.equal(r.body.code, 'not_found');
  }
  t.ok(fs.existsSync(path.join(dir, 'notes.json')), 'a file of another shape stays');
  t.ok(fs.existsSync(path.join(s.dataDir, 'outside.json')), 'a file outside the directory stays');

  const del = await s.request('DELETE', `/api/backup/files/${first.filename}`, { token: a });
  t.equal(del.status, 204);
  t.equal(del.text, '');
  t.notOk(fs.existsSync(path.join(dir, first.filename)), 'the file is gone');
  t.same(await names(), [second.filename], 'the listing no longer shows it');
  t.equal((await s.request('GET', `/api/backup/files/${first.filename}`, { token: a })).status, 404, 'download: 404');
  t.equal(
    (await s.request('DELETE', `/api/backup/files/${first.filename}`, { token: a })).status,
    404,
    'a second delete: 404',
  );
  t.match(
    s.logs().find((l) => l.msg === 'backup deleted'),
    { file: first.filename },
    'the delete is logged',
  );
});

t.test('nothing staged: GET pending-restore answers 204 without a body', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const r = await s.request('GET', '/api/backup/pending-restore', { token: s.admin.token });
  t.equal(r.status, 204);
  t.equal(r.text, '');
  t.equal(
    (await s.request('DELETE', '/api/backup/pending-restore', { token: s.admin.token })).status,
    404,
    'nothing to cancel is still a 404',
  );
});
