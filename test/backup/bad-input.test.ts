/**
 * Bad uploads to prepare-restore: each is refused exactly as documented, nothing is staged, and
 * the running configuration is untouched.
 */

import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import t from 'tap';
import { checksumOf } from '../../core/src/backup/envelope.ts';
import { startService, type TestService } from '../helpers/service.ts';
import { configure, exportNow, upload } from './support.ts';

let s: TestService;
let good: any;
let before: any;

t.before(async () => {
  s = await startService();
  await configure(s);
  good = await exportNow(s, 'include');
  before = good.configuration;
});
t.teardown(() => s.stop());

/** Re-signs an edited envelope so only the intended problem remains. */
const signed = (e: any) => ({ ...e, checksum: checksumOf(e.configuration) });

async function refused(t: Test, text: string | Buffer, status: number, code: string | RegExp, query?: string) {
  const r = await upload(s.url, s.admin.token, text, query);
  t.equal(r.status, status, `status ${status}`);
  if (code) t.match(r.body?.code, code);
  t.match(r.body, { type: String, title: String, status, detail: String });
  t.equal(
    (await s.request('GET', '/api/backup/pending-restore', { token: s.admin.token })).status,
    204,
    'nothing staged',
  );
  t.notOk(fs.existsSync(path.join(s.dataDir, 'restore', 'pending.json')), 'no pending file');
  t.same((await exportNow(s)).configuration, before, 'configuration untouched');
  return r;
}

t.test('truncated files', async (t) => {
  const text = JSON.stringify(good);
  for (const cut of [0, 1, 100, Math.floor(text.length / 2), text.length - 1])
    await refused(t, text.slice(0, cut), 422, 'invalid_json');
});

t.test('wrong checksums', async (t) => {
  const edited = structuredClone(good);
  edited.configuration.providers[0].name = 'Changed by hand';
  const r = await refused(t, JSON.stringify(edited), 422, 'checksum_mismatch');
  t.match(r.body.detail, /checksum/);
  await refused(t, JSON.stringify({ ...good, checksum: `sha256:${'a'.repeat(64)}` }), 422, 'checksum_mismatch');
});

t.test('unknown format versions and a newer service version', async (t) => {
  await refused(t, JSON.stringify({ ...good, format_version: 2 }), 422, 'unknown_format_version');
  await refused(t, JSON.stringify({ ...good, format_version: 0 }), 422, 'unknown_format_version');
  await refused(t, JSON.stringify({ ...good, service_version: '99.0.0' }), 422, 'newer_service_version');
});

t.test('deep and wide JSON bombs are refused before parsing', async (t) => {
  const deep = JSON.stringify(good).replace('"settings":{', `"settings":{"x":${'['.repeat(50_000)}`);
  const r = await refused(t, deep, 422, 'json_limits_exceeded');
  t.match(r.body.detail, /deeper than 10 levels/);
  const wide = `{"format":"herald-config-backup","pad":[${Array.from({ length: 100_001 }, () => '1').join(',')}]}`;
  t.match((await refused(t, wide, 422, 'json_limits_exceeded')).body.detail, /more than 100000 values/);
  const justDeepEnough = signed({
    ...good,
    configuration: {
      ...good.configuration,
      providers: [{ ...good.configuration.providers[0], config: { a: { b: { c: { d: { e: { f: {} } } } } } } }],
    },
  });
  await refused(t, JSON.stringify(justDeepEnough), 422, 'json_limits_exceeded');
});

t.test('__proto__, constructor and prototype keys', async (t) => {
  for (const key of ['__proto__', 'constructor', 'prototype']) {
    const e = structuredClone(good);
    const text = JSON.stringify(signed(e)).replace('"label":"north"', `"label":"north","${key}":{"isAdmin":true}`);
    const r = await refused(t, text, 422, 'forbidden_key');
    t.match(r.body.detail, key);
  }
  t.equal(({} as any).isAdmin, undefined, 'no prototype was polluted');
});

t.test('invalid JSON-typed fields are refused by the plugin schemas and the record rules', async (t) => {
  const mutate = (fn: (c: any) => void) => {
    const e = structuredClone(good);
    fn(e.configuration);
    return JSON.stringify(signed(e));
  };
  const ex = (c: any) => c.providers.find((p: any) => p.kind === 'example');
  await refused(
    t,
    mutate((c) => {
      ex(c).config.extra = 'x';
    }),
    422,
    'invalid_backup',
  );
  await refused(
    t,
    mutate((c) => {
      ex(c).config.shared_token = 'short';
    }),
    422,
    'invalid_backup',
  );
  await refused(
    t,
    mutate((c) => {
      c.targets[0].config.url = 'ftp://x';
    }),
    422,
    'invalid_backup',
  );
  await refused(
    t,
    mutate((c) => {
      c.trackers.find((x: any) => x.name === 'Things').event_types.not_an_event = true;
    }),
    422,
    'invalid_backup',
  );
  await refused(
    t,
    mutate((c) => {
      c.trackers.find((x: any) => x.name === 'Things').quiet_hours = { start: '25:00', end: '07:00', timezone: 'UTC' };
    }),
    422,
    'invalid_backup',
  );
  await refused(
    t,
    mutate((c) => {
      c.actions[0].schedule = '* * * * * *';
    }),
    422,
    'invalid_backup',
  );
  await refused(
    t,
    mutate((c) => {
      c.actions[0].timezone = 'Mars/Olympus';
    }),
    422,
    'invalid_backup',
  );
  await refused(
    t,
    mutate((c) => {
      c.settings.backup_retention_count = '0';
    }),
    422,
    'invalid_backup',
  );
  await refused(
    t,
    mutate((c) => {
      c.settings.evil = 'x';
    }),
    422,
    'invalid_backup',
  );
  await refused(
    t,
    mutate((c) => {
      c.providers[0].name = 'x'.repeat(201);
    }),
    422,
    'invalid_backup',
  );
  await refused(
    t,
    mutate((c) => {
      c.trackers[0].provider_id = '01900000-0000-7000-8000-00000000abcd';
    }),
    422,
    'invalid_backup',
  );
  await refused(
    t,
    mutate((c) => {
      c.providers.push({ ...c.providers[0] });
    }),
    422,
    'invalid_backup',
  );
  await refused(
    t,
    mutate((c) => {
      c.users[0].password_hash = 'plaintext-password';
    }),
    422,
    'invalid_backup',
  );
});

t.test('not multipart, no file field, too large', async (t) => {
  const r = await s.request('POST', '/api/backup/prepare-restore?conflict_mode=overwrite', {
    token: s.admin.token,
    body: good,
  });
  t.equal(r.status, 415);
  const wrongField = await upload(s.url, s.admin.token, JSON.stringify(good), 'conflict_mode=overwrite', 'backup');
  t.equal(wrongField.status, 422);
  const bad = await upload(s.url, s.admin.token, JSON.stringify(good), 'conflict_mode=merge');
  t.equal(bad.status, 422, 'unknown conflict_mode');
  await refused(t, Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), 422, 'invalid_json');
  const huge = Buffer.alloc(20 * 1024 * 1024 + 10, 0x20);
  huge[0] = 0x5b;
  await refused(t, huge, 413, 'backup_too_large');
});
