/**
 * Benchmark 5, backup: export and restore (prepare-restore validation, then the apply at the next
 * boot) of a configuration with PROVIDERS code host providers and TARGETS chat-webhook targets,
 * inserted straight into SQLite. Reports each step's time and the service's peak RSS around it.
 * Baselines in the same run: the raw cost of the same data without the service — SELECT +
 * JSON.stringify for the export, JSON.parse + INSERT in one transaction for the restore.
 * An export larger than the specification's import cap (100,000 JSON values) cannot be restored;
 * the restore is then measured on the largest configuration the cap admits, and the refusal reported.
 *
 * `npm run bench:backup` (BENCH_PROVIDERS, BENCH_TARGETS adjust it).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import { BENCH_SECRET } from './lib/codehost.ts';
import { Api, benchEntry, freePort, type Herald, heraldOptions, spawnHerald, tempDir } from './lib/herald.ts';
import { RELAY_PLUGINS } from './lib/relay-setup.ts';
import { envInt, fmt, heading, line, record, wallMs } from './lib/stats.ts';

const PROVIDERS = envInt('BENCH_PROVIDERS', 10_000);
const TARGETS = envInt('BENCH_TARGETS', 10_000);
const ADMIN = { email: 'bench@example.test', password: 'bench password 123' };
/** The specification's cap on a backup import ("backup import node count: at most 100,000"). */
const IMPORT_VALUE_LIMIT = 100_000;
// What boots: the built service (`npm start`'s, the default) or the sources (BENCH_ENTRY=source).
const ENTRY = benchEntry();

/** Copies the template row `n` times with fresh ids (and fresh unique columns). */
function clone(
  db: Sqlite.Database,
  table: string,
  templateId: string,
  n: number,
  fresh: (i: number) => Record<string, string>,
): void {
  const cols = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
  const row = db.prepare(`SELECT * FROM ${table} WHERE id = ?`).get(templateId) as Record<string, unknown>;
  const ins = db.prepare(`INSERT INTO ${table} (${cols.join(',')}) VALUES (${cols.map(() => '?').join(',')})`);
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const f = fresh(i);
      ins.run(...cols.map((c) => (c in f ? f[c] : row[c]) as never));
    }
  })();
}

/** Peak RSS growth while `fn` runs: VmHWM is reset by nothing, so read VmRSS every 20 ms. */
async function measured<T>(
  h: Herald,
  fn: () => Promise<T>,
): Promise<{ value: T; ms: number; peakKb: number; beforeKb: number }> {
  const beforeKb = h.rssKb();
  let peakKb = beforeKb;
  const timer = setInterval(() => {
    peakKb = Math.max(peakKb, h.rssKb());
  }, 20);
  const t = wallMs();
  try {
    const value = await fn();
    return { value, ms: wallMs() - t, peakKb: Math.max(peakKb, h.rssKb()), beforeKb };
  } finally {
    clearInterval(timer);
  }
}

function rawBaseline(file: string): { exportMs: number; restoreMs: number } {
  const db = new Sqlite(file, { readonly: true });
  let t = wallMs();
  const data = {
    providers: db.prepare('SELECT * FROM providers').all(),
    targets: db.prepare('SELECT * FROM targets').all(),
  };
  const text = JSON.stringify(data);
  const exportMs = wallMs() - t;
  db.close();
  const copy = new Sqlite(':memory:');
  t = wallMs();
  const parsed = JSON.parse(text) as Record<string, Record<string, unknown>[]>;
  for (const [table, rows] of Object.entries(parsed)) {
    const cols = Object.keys(rows[0]!);
    copy.exec(`CREATE TABLE ${table} (${cols.join(',')})`);
    const ins = copy.prepare(`INSERT INTO ${table} VALUES (${cols.map(() => '?').join(',')})`);
    copy.transaction(() => {
      for (const r of rows) ins.run(...cols.map((c) => r[c] as never));
    })();
  }
  const restoreMs = wallMs() - t;
  copy.close();
  return { exportMs, restoreMs };
}

heading(`backup (${PROVIDERS.toLocaleString('en-US')} providers, ${TARGETS.toLocaleString('en-US')} targets)`);
/** JSON values in a document, counted the way the import limit counts them (every object, array and scalar). */
function countValues(v: unknown): number {
  if (Array.isArray(v)) return 1 + v.reduce((n: number, x) => n + countValues(x), 0);
  if (v !== null && typeof v === 'object') return 1 + Object.values(v).reduce((n: number, x) => n + countValues(x), 0);
  return 1;
}

/**
 * Every service of this bench has the same SERVICE_SECRET_KEY, as an operator moving to a new machine
 * keeps it: an `include` backup's secrets are sealed with that key, and only a service holding it
 * (or holding it as SERVICE_SECRET_KEY_PREVIOUS) can restore them.
 */
const SECRET_KEY = heraldOptions('', 0, RELAY_PLUGINS, {}, ENTRY).key;

/** A source service seeded with `np` providers and `nt` targets; exports it and returns the file. */
async function exportOf(np: number, nt: number, report: boolean) {
  const src = {
    ...heraldOptions(tempDir('backup-src'), await freePort(), RELAY_PLUGINS, {}, ENTRY),
    key: SECRET_KEY,
  };
  let h = spawnHerald(src);
  await h.ready();
  let api = new Api(h.url);
  await api.setup(ADMIN.email, ADMIN.password);
  const p = await api.ok('POST', '/api/providers', {
    kind: 'codehost',
    name: 'p-template',
    config: { host: 'github', webhook_secret: BENCH_SECRET },
  });
  const tg = await api.ok('POST', '/api/targets', {
    kind: 'chat_webhook',
    name: 't-template',
    config: { format: 'mattermost', url: 'http://127.0.0.1:9/hook' },
    locale: 'en',
  });
  await h.stop();
  const dbFile = path.join(src.dataDir, 'herald.db');
  const seed = new Sqlite(dbFile);
  clone(seed, 'providers', p.id, np - 1, (i) => ({
    id: crypto.randomUUID(),
    name: `provider ${i}`,
    webhook_token: crypto.randomBytes(24).toString('base64url'),
  }));
  clone(seed, 'targets', tg.id, nt - 1, (i) => ({ id: crypto.randomUUID(), name: `target ${i}` }));
  seed.close();
  const raw = rawBaseline(dbFile);
  if (report) {
    line('baseline: raw SELECT + JSON.stringify', `${fmt(raw.exportMs, 0)} ms`);
    line('baseline: raw JSON.parse + INSERT (one transaction)', `${fmt(raw.restoreMs, 0)} ms`);
  }
  h = spawnHerald(src);
  await h.ready();
  api = new Api(h.url);
  api.token = (await api.ok('POST', '/api/auth/login', ADMIN)).access_token;
  const exp = await measured(h, async () => {
    const r = await fetch(`${h.url}/api/backup/export?secrets_mode=include`, {
      headers: { authorization: `Bearer ${api.token}` },
    });
    if (r.status !== 200) throw new Error(`export: ${r.status} ${await r.text()}`);
    return Buffer.from(await r.arrayBuffer());
  });
  await h.stop();
  fs.rmSync(src.dataDir, { recursive: true, force: true });
  return { exp, raw, values: countValues(JSON.parse(exp.value.toString('utf8'))) };
}

const first = await exportOf(PROVIDERS, TARGETS, true);
const exp = first.exp;
line(
  'export (GET /api/backup/export)',
  `${fmt(exp.ms, 0)} ms, ${fmt(exp.value.length / 1048576, 1)} MB, ${first.values.toLocaleString('en-US')} JSON values`,
  { text: '<= 2 s', ok: exp.ms <= 2000 },
);
line('export: service RSS before → peak', `${fmt(exp.beforeKb / 1024, 1)} → ${fmt(exp.peakKb / 1024, 1)} MB`);
let restoreOf = { exp, raw: first.raw, np: PROVIDERS, nt: TARGETS };
if (first.values > IMPORT_VALUE_LIMIT) {
  // The specification caps a backup import at 100,000 JSON values, so this export cannot be
  // restored as a whole; the restore is measured on the largest configuration the cap admits.
  const perRecord = first.values / (PROVIDERS + TARGETS);
  const fit = Math.floor((IMPORT_VALUE_LIMIT * 0.97) / perRecord / 2);
  line(
    'restore of the full export',
    `refused by design: ${first.values.toLocaleString('en-US')} values > the import cap of ` +
      `${IMPORT_VALUE_LIMIT.toLocaleString('en-US')}`,
    { text: '<= 2 s', ok: false },
  );
  const smaller = await exportOf(fit, fit, false);
  line(
    `restore measured on ${fit.toLocaleString('en-US')} providers + ${fit.toLocaleString('en-US')} targets`,
    `${smaller.values.toLocaleString('en-US')} JSON values, ${fmt(smaller.exp.value.length / 1048576, 1)} MB`,
  );
  restoreOf = { exp: smaller.exp, raw: smaller.raw, np: fit, nt: fit };
}

// Target: a fresh service with the same administrator; the whole configuration is new to it.
const dst = { ...heraldOptions(tempDir('backup-dst'), await freePort(), RELAY_PLUGINS, {}, ENTRY), key: SECRET_KEY };
let h = spawnHerald(dst);
await h.ready();
const api = new Api(h.url);
await api.setup(ADMIN.email, ADMIN.password);
const prep = await measured(h, async () => {
  const form = new FormData();
  form.append('file', new Blob([restoreOf.exp.value], { type: 'application/json' }), 'backup.json');
  const r = await fetch(`${h.url}/api/backup/prepare-restore?conflict_mode=overwrite`, {
    method: 'POST',
    body: form,
    headers: { authorization: `Bearer ${api.token}` },
  });
  const body = (await r.json()) as { summary?: { counts?: Record<string, Record<string, number>> } };
  if (r.status !== 201) throw new Error(`prepare-restore: ${r.status} ${JSON.stringify(body).slice(0, 500)}`);
  return body;
});
line('restore: prepare (upload, validation, plan)', `${fmt(prep.ms, 0)} ms`, { text: '<= 2 s', ok: prep.ms <= 2000 });
line('restore: service RSS before → peak', `${fmt(prep.beforeKb / 1024, 1)} → ${fmt(prep.peakKb / 1024, 1)} MB`);
const counts = prep.value.summary?.counts ?? {};
line(
  'restore: planned',
  `providers ${JSON.stringify(counts.providers ?? {})}, targets ${JSON.stringify(counts.targets ?? {})}`,
);

// Apply happens at the next boot: time a plain restart, then the restart that applies the restore.
const pendingFile = path.join(dst.dataDir, 'restore', 'pending.json');
fs.renameSync(pendingFile, `${pendingFile}.held`);
await h.stop();
h = spawnHerald(dst);
const plainBoot = (await h.ready()) - h.spawnedAt;
await h.stop();
fs.renameSync(`${pendingFile}.held`, pendingFile);
h = spawnHerald(dst);
const applyBoot = (await h.ready(120_000)) - h.spawnedAt;
const applyPeakKb = h.peakRssKb();
const applied = fs.readdirSync(path.join(dst.dataDir, 'restore')).some((f) => /^applied-/.test(f));
const check = new Sqlite(path.join(dst.dataDir, 'herald.db'), { readonly: true });
const n = {
  providers: (check.prepare("SELECT COUNT(*) AS n FROM providers WHERE kind = 'codehost'").get() as { n: number }).n,
  targets: (check.prepare('SELECT COUNT(*) AS n FROM targets').get() as { n: number }).n,
};
check.close();
await h.stop();
const applyMs = applyBoot - plainBoot;
line(
  'restore: apply at boot (boot with − boot without)',
  `${fmt(applyMs, 0)} ms (boots ${fmt(applyBoot, 0)} / ${fmt(plainBoot, 0)} ms)`,
  { text: '<= 2 s', ok: applied && applyMs <= 2000 },
);
line(
  'restore: applied, rows present after',
  `${applied ? 'yes' : 'NO'}; providers ${n.providers}, targets ${n.targets}`,
);
line('restore: peak RSS of the applying boot', `${fmt(applyPeakKb / 1024, 1)} MB`);
line('ratio export / raw baseline', `${fmt(exp.ms / first.raw.exportMs, 1)}×`);
line('ratio prepare + apply / raw baseline (same rows)', `${fmt((prep.ms + applyMs) / restoreOf.raw.restoreMs, 1)}×`);
fs.rmSync(dst.dataDir, { recursive: true, force: true });
record('backup', {
  providers: PROVIDERS,
  targets: TARGETS,
  export_values: first.values,
  raw: first.raw,
  export_ms: exp.ms,
  export_bytes: exp.value.length,
  export_peak_kb: exp.peakKb,
  restored: { providers: restoreOf.np, targets: restoreOf.nt, raw: restoreOf.raw },
  prepare_ms: prep.ms,
  prepare_peak_kb: prep.peakKb,
  apply_ms: applyMs,
  plain_boot_ms: plainBoot,
  apply_boot_ms: applyBoot,
  apply_peak_kb: applyPeakKb,
  applied,
});
