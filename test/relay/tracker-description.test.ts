/**
 * A tracker's description (the operator's own note), added by following the README's "how to add a
 * field": one line in the tracker's definition, its default, a migration and the form. The API, the
 * backup's export and the restore's check take it from the definition with nothing else written.
 */
import t from 'tap';
import { checksumOf } from '../../core/src/backup/envelope.ts';
import { exportNow, upload } from '../backup/support.ts';
import { startService } from '../helpers/service.ts';

t.test('a tracker description: kept, changed, cleared, bounded, backed up and restored', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const token = s.admin.token;
  const p = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'Ex', config: { shared_token: 'sharedtoken1' } },
  });
  t.equal(p.status, 201, p.text);

  const plain = await s.request('POST', '/api/trackers', { token, body: { provider_id: p.body.id, name: 'Plain' } });
  t.equal(plain.status, 201);
  t.equal(plain.body.description, null, 'none unless given');

  const at = 'x'.repeat(500);
  const c = await s.request('POST', '/api/trackers', {
    token,
    body: { provider_id: p.body.id, name: 'Noted', description: at },
  });
  t.equal(c.status, 201, '500 characters are taken');
  t.equal(c.body.description, at);
  t.equal((await s.request('GET', `/api/trackers/${c.body.id}`, { token })).body.description, at, 'read back');

  const over = await s.request('POST', '/api/trackers', {
    token,
    body: { provider_id: p.body.id, name: 'Long', description: `${at}x` },
  });
  t.equal(over.status, 422, '501 characters are refused');
  t.match(over.body.detail, /description/, 'the detail names the field');

  const renamed = await s.request('PATCH', `/api/trackers/${c.body.id}`, { token, body: { name: 'Renamed' } });
  t.equal(renamed.body.description, at, 'a change that leaves it out keeps it');
  const changed = await s.request('PATCH', `/api/trackers/${c.body.id}`, {
    token,
    body: { description: 'Front door sensors' },
  });
  t.equal(changed.status, 200);
  t.equal(changed.body.description, 'Front door sensors');
  const tooLong = await s.request('PATCH', `/api/trackers/${c.body.id}`, { token, body: { description: `${at}x` } });
  t.equal(tooLong.status, 422, 'a change is bounded too');

  const backup = await exportNow(s, 'include');
  const rec = backup.configuration.trackers.find((x: { id: string }) => x.id === c.body.id);
  t.equal(rec.description, 'Front door sensors', 'the export carries it');

  const staged = async (edit: (tr: Record<string, unknown>) => void) => {
    const e = structuredClone(backup);
    for (const tr of e.configuration.trackers) edit(tr);
    e.checksum = checksumOf(e.configuration);
    const r = await upload(s.url, token, JSON.stringify(e), 'conflict_mode=skip');
    if (r.status === 201) await s.request('DELETE', '/api/backup/pending-restore', { token });
    return r;
  };
  t.equal((await staged(() => {})).status, 201, 'the backup restores');
  const older = await staged((tr) => {
    delete tr.description;
  });
  t.equal(older.status, 201, 'a backup from before descriptions restores');
  const bad = await staged((tr) => {
    tr.description = `${at}x`;
  });
  t.equal(bad.status, 422, 'a backup with a description over the limit is refused');
  t.equal(bad.body.code, 'invalid_backup');
  t.ok(
    bad.body.errors.some((x: { path: string }) => /\/trackers\/\d+\/description/.test(x.path)),
    'the error points at the description',
  );

  const patched = await s.request('PATCH', `/api/trackers/${c.body.id}`, { token, body: { description: null } });
  t.equal(patched.body.description, null, 'null clears it');
});
