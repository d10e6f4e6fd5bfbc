import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { snapshotName } from './snapshot.ts';

const run = promisify(execFile);
const DUMP = /^pre-migrate-\d{8}T\d{6}(\d{3})?Z\.dump$/;

export interface PgSnapshotResult {
  file: string;
  pruned: string[];
  entries: number;
}

/** The first executable called `name` on PATH, or undefined. */
export function onPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/** `pre-migrate-<timestamp>.dump`, the same timestamp as the SQLite snapshots. */
export function dumpName(at: Date): string {
  return snapshotName(at).replace(/\.db$/, '.dump');
}

/**
 * The connection URL without its password (which goes to PGPASSWORD instead, so it never shows in
 * a process listing or an error message), and that password.
 */
export function splitPassword(url: string): { url: string; password?: string } {
  const u = new URL(url);
  const password = u.password ? decodeURIComponent(u.password) : undefined;
  u.password = '';
  return { url: u.toString(), password };
}

/**
 * Dumps a PostgreSQL database with `pg_dump --format=custom` into `dir`, verifies the file with
 * `pg_restore --list` (a readable archive listing at least one table), and keeps only the newest
 * `keep` dumps. The file appears under its final name only once verified. Throws when either tool
 * fails, with the password masked.
 */
export async function takePgSnapshot(o: {
  databaseUrl: string;
  dir: string;
  keep: number;
  pgDump: string;
  pgRestore: string;
  at?: Date;
}): Promise<PgSnapshotResult> {
  fs.mkdirSync(o.dir, { recursive: true });
  const file = path.join(o.dir, dumpName(o.at ?? new Date()));
  const partial = `${file}.partial`;
  const { url, password } = splitPassword(o.databaseUrl);
  const env = { ...process.env, ...(password ? { PGPASSWORD: password } : {}) };
  const mask = (s: string) => (password ? s.split(password).join('***') : s);
  try {
    await run(o.pgDump, ['--format=custom', '--no-password', `--file=${partial}`, `--dbname=${url}`], {
      env,
      maxBuffer: 16 * 1024 * 1024,
    });
    const { stdout } = await run(o.pgRestore, ['--list', partial], { env, maxBuffer: 64 * 1024 * 1024 });
    const entries = stdout.split('\n').filter((l) => /^\d+;/.test(l));
    if (!entries.some((l) => / TABLE /.test(l))) throw new Error('pg_restore --list shows no table in the dump');
    fs.renameSync(partial, file);
    const all = fs
      .readdirSync(o.dir)
      .filter((f) => DUMP.test(f))
      .sort();
    const pruned = all.slice(0, Math.max(0, all.length - o.keep));
    for (const f of pruned) fs.rmSync(path.join(o.dir, f), { force: true });
    return { file, pruned, entries: entries.length };
  } catch (err) {
    fs.rmSync(partial, { force: true });
    const e = err as Error & { stderr?: string };
    throw new Error(
      `pre-migration pg_dump snapshot failed (pg_dump must be the server's major version or newer; ` +
        'SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP=0 boots without a snapshot): ' +
        `${mask((e.stderr || e.message || String(err)).trim()).slice(0, 1000)}`,
    );
  }
}
