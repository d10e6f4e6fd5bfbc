/**
 * The per-user storage limit (assistant/storage.ts): documents (name, text, search chunks), memory
 * entries (content, category) and report PDFs count against SERVICE_USER_STORAGE_MB or the user's
 * own limit an administrator set. Both sides of the limit for each kind of write (exactly at it is
 * accepted, one byte over is refused: 413 for an upload, 422 for a memory entry or a report, with
 * the limit and the usage in the answer), the administrator's override and its removal, and
 * isolation (another user's usage never counts).
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { harness, newUser, upload } from './support.ts';

const LIMIT = 1_000_000;

t.test('storage: at the limit accepted, one byte over refused, per user', async (t) => {
  const { svc } = await harness(t, { SERVICE_USER_STORAGE_MB: '5' });
  const u = await newUser(svc, { max_storage_mb: 1 });
  const v = await newUser(svc);
  const storage = async (token: string) => (await svc.request('GET', '/api/v1/storage', { token })).body;
  const remember = async (token: string, content: string) =>
    svc.request('POST', '/api/v1/memory', { token, body: { content } });
  /** Memory entries of `bytes` ASCII bytes in all (an entry holds at most 32,000). */
  const fill = async (token: string, bytes: number) => {
    const ids: string[] = [];
    for (let left = bytes; left > 0; left -= 32_000) {
      const r = await remember(token, 'm'.repeat(Math.min(32_000, left)));
      if (r.status !== 201) throw new Error(`fill: ${r.status} ${JSON.stringify(r.body)}`);
      ids.push(r.body.id);
    }
    return ids;
  };

  t.same(
    await storage(u.token),
    {
      used_bytes: 0,
      limit_bytes: LIMIT,
      limit_mb: 1,
      custom_limit: true,
      exceeded: false,
      documents_bytes: 0,
      memory_bytes: 0,
      reports_bytes: 0,
    },
    "the administrator's limit",
  );
  t.match(
    await storage(v.token),
    { limit_bytes: 5 * LIMIT, limit_mb: 5, custom_limit: false },
    'SERVICE_USER_STORAGE_MB for the others',
  );

  // Another user's data, larger than u's whole limit, never counts for u.
  const big = 'lorem ipsum dolor sit amet, '.repeat(25_000);
  t.equal((await upload(svc, v.token, 'big.txt', big)).status, 201);
  const vUsed = (await storage(v.token)).used_bytes;
  t.ok(vUsed > 1_300_000, `the other user's document counts for them (${vUsed} bytes)`);
  t.equal((await storage(u.token)).used_bytes, 0, 'and not for u');

  // What one document costs: its name, its text, and its text again as search chunks.
  const text = 'The quick brown fox jumps over the lazy dog. '.repeat(2_000).trim();
  const first = await upload(svc, u.token, 'fox.txt', text);
  t.equal(first.status, 201);
  const cost = (await storage(u.token)).used_bytes;
  // The chunks drop the spaces they are cut at, so they hold a little less than the text.
  t.ok(
    cost > 1.99 * text.length && cost <= 2 * text.length + 'fox.txt'.length,
    `the document counts its name, text and chunks (${cost} bytes for ${text.length} characters)`,
  );
  t.equal((await svc.request('DELETE', `/api/v1/documents/${first.body.id}`, { token: u.token })).status, 204);
  t.equal((await storage(u.token)).used_bytes, 0, 'deleting gives the room back');

  await t.test('a document exactly filling the limit is stored; then one byte more is refused with 422', async (t) => {
    const filler = await fill(u.token, LIMIT - cost);
    const doc = await upload(svc, u.token, 'fox.txt', text);
    t.equal(doc.status, 201, 'exactly at the limit');
    t.match(await storage(u.token), {
      used_bytes: LIMIT,
      exceeded: true,
      documents_bytes: cost,
      memory_bytes: LIMIT - cost,
    });
    const over = await remember(u.token, 'x');
    t.equal(over.status, 422, 'a memory entry of one byte is refused');
    t.equal(over.body.code, 'storage_quota_exceeded');
    t.match(over.body.params, { limit_mb: 1, limit_bytes: LIMIT, used_bytes: LIMIT, needed_bytes: 1 });
    t.match(
      over.body.detail,
      new RegExp(
        /This memory entry needs 0 MB \(1 bytes\), but you have used 1 MB \(1000000 bytes\) of your storage /.source +
          /limit of 1 MB \(1000000 bytes\) for documents, memory entries and reports\. Delete .* or ask an /.source +
          /administrator to raise your limit\./.source,
      ),
    );
    const fullUpload = await upload(svc, u.token, 'tiny.txt', 'x');
    t.equal(fullUpload.status, 413, 'an upload when nothing fits is 413');
    t.equal(fullUpload.body.code, 'storage_quota_exceeded');
    t.match(fullUpload.body.detail, /You have used 1 MB \(1000000 bytes\) of your storage limit of 1 MB/);
    const report = await svc.request('POST', '/api/v1/reports', { token: u.token, body: {} });
    t.equal(report.status, 422, 'a report when nothing fits is 422');
    t.equal(report.body.code, 'storage_quota_exceeded');
    t.equal(
      (await svc.request('DELETE', `/api/v1/documents/${doc.body.id}`, { token: u.token })).status,
      204,
      'deleting works at the limit',
    );
    for (const id of filler) await svc.request('DELETE', `/api/v1/memory/${id}`, { token: u.token });
    t.equal((await storage(u.token)).used_bytes, 0);
  });

  await t.test('a document one byte over the room left is refused with 413 and not stored', async (t) => {
    const filler = await fill(u.token, LIMIT - cost + 1);
    const doc = await upload(svc, u.token, 'fox.txt', text);
    t.equal(doc.status, 413, 'one byte over');
    t.equal(doc.body.code, 'storage_quota_exceeded');
    t.match(doc.body.params, {
      what: 'document',
      limit_bytes: LIMIT,
      used_bytes: LIMIT - cost + 1,
      needed_bytes: cost,
    });
    t.match(
      doc.body.detail,
      new RegExp(
        `This document needs [0-9.]+ MB \\(${cost} bytes\\), but you have used [0-9.]+ MB \\(${LIMIT - cost + 1} ` +
          `bytes\\) of your storage limit of 1 MB \\(1000000 bytes\\)`,
      ),
    );
    t.same(
      (await svc.request('GET', '/api/v1/documents', { token: u.token })).body.documents,
      [],
      'nothing was stored',
    );
    t.equal((await storage(u.token)).used_bytes, LIMIT - cost + 1, 'usage unchanged');

    // Memory entries exactly filling the rest are stored; growing the last by one byte is refused, shrinking it is not.
    const rest = await fill(u.token, cost - 1);
    t.equal((await storage(u.token)).used_bytes, LIMIT, 'memory entries exactly at the limit');
    const last = (await svc.request('GET', `/api/v1/memory/${rest.at(-1)}`, { token: u.token })).body;
    t.equal(last.content.length, (cost - 1) % 32_000 || 32_000);
    const grown = await svc.request('PATCH', `/api/v1/memory/${last.id}`, { token: u.token, body: { category: 'k' } });
    t.equal(grown.status, 422, 'a change adding one byte (a category) is refused');
    t.match(grown.body.params, { what: 'memory entry', used_bytes: LIMIT, needed_bytes: 1 });
    const shrunk = await svc.request('PATCH', `/api/v1/memory/${last.id}`, {
      token: u.token,
      body: { content: last.content.slice(1) },
    });
    t.equal(shrunk.status, 200, 'a change that shrinks is saved');
    t.equal((await storage(u.token)).used_bytes, LIMIT - 1);

    for (const id of [...rest, ...filler]) await svc.request('DELETE', `/api/v1/memory/${id}`, { token: u.token });

    // A report needs more than one byte: with one byte left it is refused, and no file is left behind.
    // Documents take the room here (a report quotes a few paragraphs of them, but renders every memory entry).
    const docs: string[] = [];
    for (const [name, body] of [...Array(5).fill(['fox.txt', text]), ['pad.txt', 'pad '.repeat(12_000).trim()]] as [
      string,
      string,
    ][])
      docs.push((await upload(svc, u.token, name, body)).body.id);
    const room = LIMIT - (await storage(u.token)).used_bytes;
    t.ok(room > 1 && room < 32_000, `documents leave ${room} bytes`);
    const note = await remember(u.token, 'r '.repeat(room).slice(0, room - 1));
    t.equal(note.status, 201);
    t.equal((await storage(u.token)).used_bytes, LIMIT - 1);
    const report = await svc.request('POST', '/api/v1/reports', { token: u.token, body: {} });
    t.equal(report.status, 422);
    t.equal(report.body.code, 'storage_quota_exceeded');
    t.match(report.body.params, { what: 'report', used_bytes: LIMIT - 1 });
    t.ok(report.body.params.needed_bytes > 1, `the PDF's size is named (${report.body.params.needed_bytes} bytes)`);
    const dir = path.join(svc.dataDir, 'reports', u.id);
    t.same(fs.existsSync(dir) ? fs.readdirSync(dir) : [], [], 'no report file kept');
    t.same((await svc.request('GET', '/api/v1/reports', { token: u.token })).body.reports, []);

    await svc.request('DELETE', `/api/v1/memory/${note.body.id}`, { token: u.token });
    for (const id of docs) await svc.request('DELETE', `/api/v1/documents/${id}`, { token: u.token });
    const made = await svc.request('POST', '/api/v1/reports', { token: u.token, body: {} });
    t.equal(made.status, 201, 'with room, the report is made');
    t.match(
      await storage(u.token),
      { used_bytes: made.body.size_bytes, reports_bytes: made.body.size_bytes },
      'and counts its PDF',
    );
    await svc.request('DELETE', `/api/v1/reports/${made.body.id}`, { token: u.token });
  });

  await t.test('the administrator raises the limit, and removing the override goes back to the default', async (t) => {
    await fill(u.token, LIMIT);
    t.equal((await upload(svc, u.token, 'fox.txt', text)).status, 413);
    const raised = await svc.request('PATCH', `/api/v1/admin/users/${u.id}`, {
      token: svc.admin.token,
      body: { max_storage_mb: 2 },
    });
    t.equal(raised.status, 200);
    t.equal(raised.body.max_storage_mb, 2);
    t.match(await storage(u.token), { limit_bytes: 2 * LIMIT, custom_limit: true, exceeded: false });
    t.equal((await upload(svc, u.token, 'fox.txt', text)).status, 201, 'fits under the raised limit');
    const cleared = await svc.request('PATCH', `/api/v1/admin/users/${u.id}`, {
      token: svc.admin.token,
      body: { max_storage_mb: null },
    });
    t.equal(cleared.body.max_storage_mb, null);
    t.match(await storage(u.token), { limit_bytes: 5 * LIMIT, limit_mb: 5, custom_limit: false });
    t.equal(
      (
        await svc.request('PATCH', `/api/v1/admin/users/${u.id}`, {
          token: svc.admin.token,
          body: { max_storage_mb: -1 },
        })
      ).status,
      422,
      'a negative limit is refused',
    );
    t.equal(
      (await svc.request('PATCH', `/api/v1/admin/users/${u.id}`, { token: u.token, body: { max_storage_mb: 100 } }))
        .status,
      403,
      'only an administrator sets it',
    );
    t.equal((await storage(v.token)).used_bytes, vUsed, "the other user's usage never moved");
  });
});

t.test('the limit and usage need a signed-in user', async (t) => {
  const { svc } = await harness(t);
  t.equal((await svc.request('GET', '/api/v1/storage')).status, 401);
  t.match(
    (await svc.request('GET', '/api/v1/storage', { token: svc.admin.token })).body,
    { used_bytes: 0, limit_mb: 200, custom_limit: false },
    'SERVICE_USER_STORAGE_MB defaults to 200',
  );
});
