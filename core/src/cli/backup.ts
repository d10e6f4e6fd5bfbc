/**
 * `herald backup …`: create (a stored backup, as `POST /api/backup/files`), list (the stored ones and
 * any staged restore), stage (what `POST /api/backup/prepare-restore` does, for an instance whose
 * web client cannot be reached: the same reading, checks and plan, then `restore/pending.json`,
 * applied when the service next starts) and unstage. A progress bar follows the work on a terminal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough, Transform } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { checkParsed } from '../backup/envelope.ts';
import { backupsDir, listBackups, writeBackup } from '../backup/files.ts';
import { CONFLICT_MODES, type ConflictMode, type Summary } from '../backup/planner.ts';
import { planRestore, totals } from '../backup/restore.ts';
import type { SecretsModeT } from '../backup/schema.ts';
import { cancelPending, type PendingRestore, pendingPath, readPending, writePending } from '../backup/staged.ts';
import { MAX_UPLOAD_BYTES, readBackupUpload } from '../backup/upload.ts';
import type { Core } from '../core.ts';
import type { Database } from '../db/database.ts';
import { type CliCore, cliConfig, withCore } from './context.ts';
import type { Messages } from './i18n.ts';
import { CliError, EXIT, out, printJson, table } from './output.ts';
import { requireKey } from './secret-key.ts';
import { progressBar } from './terminal.ts';

/** The tables a backup reads rows from (export.ts), counted first so that the bar can move with the rows. */
const EXPORTED = [
  'users',
  'providers',
  'trackers',
  'targets',
  'bots',
  'settings',
  'tracker_targets',
  'bot_chats',
  'actions',
  'templates',
  'skills',
  'personal_contexts',
];

/**
 * A core with every plugin (their schemas say which fields are secret), refused, as the service's start is, when the
 * key does not open the secrets.
 */
function withKeyedCore<T>(m: Messages, fn: (core: CliCore) => Promise<T>): Promise<T> {
  return withCore(m, 'existing', 'all', async (core) => {
    await requireKey(core.db, core.atRest);
    return fn(core);
  });
}

/** `db` whose `all()` reports how many rows each query read. */
function countingRows(db: Database, onRows: (n: number) => void): Database {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'all') {
        return async (sql: string, params?: never[]) => {
          const rows = await target.all(sql, params);
          onRows(rows.length);
          return rows;
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

export async function createBackup(m: Messages, o: { secrets?: string }): Promise<void> {
  const mode = (o.secrets ?? 'exclude') as SecretsModeT;
  if (mode !== 'exclude' && mode !== 'include')
    throw new CliError('backup.bad_secrets_mode', { value: String(o.secrets) }, EXIT.usage);
  await withKeyedCore(m, async (core) => {
    let rows = 0;
    for (const t of EXPORTED)
      rows += Number(
        (await core.db.get<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${t}`).catch(() => undefined))?.n ?? 0,
      );
    const bar = progressBar(rows + 1, m.t('backup.reading'));
    const view = Object.create(core) as CliCore;
    view.db = countingRows(core.db, (n) => bar.advance(n));
    let file;
    try {
      file = await writeBackup(view, mode, 'manual');
    } catch (err) {
      bar.failed();
      throw err;
    }
    bar.advance(1);
    await bar.done(m.t('backup.written_short'));
    out(m.t('backup.written', { path: path.join(backupsDir(core), file.filename), size: m.bytes(file.size_bytes) }));
    out(m.t(mode === 'include' ? 'backup.with_secrets' : 'backup.without_secrets'));
  });
}

export function listBackupFiles(m: Messages, o: { json?: boolean }): void {
  const config = cliConfig();
  const core = { config } as Core;
  const files = listBackups(core);
  let pending: PendingRestore | undefined;
  let damaged = false;
  try {
    pending = readPending(core);
  } catch {
    damaged = true;
  }
  if (o.json) {
    printJson({
      directory: backupsDir(core),
      files,
      pending_restore: pending
        ? {
            staged_at: pending.staged_at,
            conflict_mode: pending.conflict_mode,
            source: pending.source,
            backup: pending.backup,
          }
        : null,
    });
    return;
  }
  if (!files.length) out(m.t('backup.none', { dir: backupsDir(core) }));
  else {
    out(m.t('backup.in_dir', { dir: backupsDir(core) }));
    for (const line of table(
      [m.t('backup.col_file'), m.t('backup.col_size'), m.t('backup.col_created')],
      files.map((f) => [f.filename, m.bytes(f.size_bytes), m.date(f.created_at)]),
    ))
      out(line);
  }
  if (pending)
    out(
      m.t('backup.pending', {
        file: pending.source.filename,
        at: m.date(pending.staged_at),
        mode: pending.conflict_mode,
      }),
    );
  if (damaged) out(m.t('backup.pending_damaged', { path: pendingPath(core) }));
}

/**
 * The file as `readBackupUpload` reads an upload: the API's size limit, strict UTF-8 and the JSON
 * guard chunk by chunk, with the API's problem texts. Only the first MAX_UPLOAD_BYTES are read;
 * a longer file is refused as an upload of its size is (413).
 */
async function readBackupFile(file: string, onBytes: (n: number) => void) {
  let size: number;
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) throw new CliError('backup.not_a_file', { path: file });
    size = st.size;
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError('backup.cannot_read', {
      path: file,
      reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message,
    });
  }
  const counted = new Transform({
    transform(chunk: Buffer, _enc, done) {
      onBytes(chunk.length);
      done(null, chunk);
    },
  });
  const stream = Object.assign(new PassThrough(), { truncated: size > MAX_UPLOAD_BYTES });
  if (size === 0) stream.end();
  else {
    const source = fs.createReadStream(file, { end: Math.min(size, MAX_UPLOAD_BYTES) - 1 });
    source.on('error', (err) => stream.destroy(err));
    source.pipe(counted).pipe(stream);
  }
  // What readBackupUpload needs of a multipart request: one part named "file".
  const req = {
    isMultipart: () => true,
    file: async () => ({ fieldname: 'file', filename: path.basename(file), file: stream }),
  } as unknown as FastifyRequest;
  return readBackupUpload(req);
}

function printSummary(m: Messages, summary: Summary): void {
  const t = totals(summary);
  out(
    m.t('backup.summary', {
      created: t.created,
      replaced: t.replaced,
      kept: t.kept,
      unchanged: t.unchanged,
      skipped: t.skipped,
      disabled: t.disabled,
    }),
  );
  for (const s of summary.skipped.slice(0, 20))
    out(`  ${m.t('backup.skipped_item', { table: s.table, id: s.id, reason: s.reason })}`);
  for (const d of summary.disabled.slice(0, 20))
    out(`  ${m.t('backup.disabled_item', { table: d.table, id: d.id, reason: d.reason })}`);
  for (const w of summary.warnings.slice(0, 20)) out(`  ${m.t('backup.warning_item', { warning: w })}`);
}

export async function stageBackup(m: Messages, file: string, o: { conflictMode?: string }): Promise<void> {
  const mode = (o.conflictMode ?? 'fail') as ConflictMode;
  if (!CONFLICT_MODES.includes(mode))
    throw new CliError(
      'backup.bad_conflict_mode',
      { value: String(o.conflictMode), allowed: CONFLICT_MODES.join(', ') },
      EXIT.usage,
    );
  const absolute = path.resolve(file);
  await withKeyedCore(m, async (core) => {
    if (readPending(core)) throw new CliError('backup.already_staged');
    let size = 0;
    try {
      size = fs.statSync(absolute).size;
    } catch {
      /* readBackupFile says why */
    }
    const bar = progressBar(Math.min(size, MAX_UPLOAD_BYTES) + 1, m.t('backup.checking'));
    let pending: PendingRestore;
    try {
      const upload = await readBackupFile(absolute, (n) => bar.advance(n));
      const { envelope, migratedFrom } = checkParsed(JSON.parse(upload.text), core.version);
      // Planned now against the current configuration: a refusal (422, 409) comes before anything is staged.
      const plan = await planRestore(core, envelope, mode);
      pending = {
        state: 'staged',
        staged_at: core.clock.now().toISOString(),
        staged_by: 'command-line',
        conflict_mode: mode,
        source: { filename: upload.filename, size_bytes: upload.size_bytes, sha256: upload.sha256 },
        backup: {
          format_version: envelope.format_version,
          service_version: envelope.service_version,
          created_at: envelope.created_at,
          secrets_mode: envelope.secrets_mode,
          ...(migratedFrom ? { migrated_from: migratedFrom } : {}),
        },
        summary: plan.summary,
        envelope,
      };
      writePending(core, pending);
    } catch (err) {
      bar.failed();
      throw err;
    }
    bar.advance(1);
    await bar.done(m.t('backup.staged_short'));
    core.logs
      .get('backup')
      .info(
        { conflict_mode: mode, source: pending.source, backup: pending.backup, by: 'command-line' },
        'restore staged',
      );
    out(m.t('backup.staged', { file: absolute, created: m.date(pending.backup.created_at), mode }));
    printSummary(m, pending.summary);
    out(m.t('backup.apply_at_start'));
  });
}

export function unstageBackup(m: Messages): void {
  const core = { config: cliConfig() } as Core;
  if (!cancelPending(core)) throw new CliError('backup.nothing_staged');
  out(m.t('backup.unstaged'));
}
