/**
 * Runs the operator's command line as a process, with the service's Node flags and this test
 * process's Node (the project's Node 24), on the data folder (and, in the PostgreSQL pass, the
 * database) of a test service: the same SERVICE_* variables the service was started with.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SERVICE_NODE_FLAGS } from '../../scripts/node-flags.ts';
import { TEST_DB, TEST_PLUGINS, testDatabaseUrl, testSecretKey } from '../helpers/service.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const CLI = path.join(ROOT, 'core/src/cli/main.ts');
/**
 * The command line as a process runs it: this Node, the service's flags, the resolution conditions
 * this test process runs with (tap's `herald-source`: the plugin contract from its sources, as the
 * in-process test services load it, not from a build that may be older), the entry file.
 */
export const CLI_COMMAND: readonly string[] = [
  process.execPath,
  ...SERVICE_NODE_FLAGS,
  ...process.execArgv.filter((a) => a.startsWith('--conditions=')),
  CLI,
];

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of the service on `dataDir`, as test/helpers/service.ts starts it, plus `env`. */
export async function serviceEnv(
  dataDir: string,
  env: Record<string, string | undefined> = {},
): Promise<Record<string, string>> {
  const databaseUrl = await testDatabaseUrl(dataDir);
  const out: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: process.env.TMPDIR,
    // Node's compile cache of the run (scripts/test.sh): the command line loads the same sources.
    NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE,
    // English unless a test asks for another language; bcrypt as cheap as the test services'.
    LANG: 'C.UTF-8',
    HERALD_BCRYPT_COST: '4',
    NO_COLOR: '1',
    SERVICE_SECRET_KEY: testSecretKey(dataDir),
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PLUGINS: TEST_PLUGINS,
    SERVICE_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
    SERVICE_LOG_FORMAT: 'json',
    ...(databaseUrl ? { SERVICE_DATABASE_URL: databaseUrl } : {}),
    ...env,
  };
  return Object.fromEntries(Object.entries(out).filter((e): e is [string, string] => e[1] !== undefined));
}

/** Runs `herald <args>` with `env` (see serviceEnv); `input` is written to its standard input, then closed. */
export function herald(args: string[], env: Record<string, string>, input = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLI_COMMAND[0]!, [...CLI_COMMAND.slice(1), ...args], {
      env,
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** A fresh, empty data folder (and, in the PostgreSQL pass, a fresh empty database for it). */
export async function emptyDataDir(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-cli-'));
  await testDatabaseUrl(dir);
  return dir;
}

export const randomEmail = (what: string): string => `${what}-${crypto.randomBytes(3).toString('hex')}@example.test`;

export { freePort } from '../helpers/peers.ts';

/**
 * Runs one statement (`?` placeholders) on the database of `dataDir` (its SQLite file, or its PostgreSQL database); the
 * number of rows changed.
 */
export async function runOnDatabase(dataDir: string, sql: string, params: unknown[] = []): Promise<number> {
  if (TEST_DB === 'sqlite') {
    const { default: Sqlite } = await import('better-sqlite3');
    const db = new Sqlite(path.join(dataDir, 'herald.db'));
    try {
      return db.prepare(sql).run(...params).changes;
    } finally {
      db.close();
    }
  }
  const pg = (await import('pg')).default;
  const c = new pg.Client({ connectionString: await testDatabaseUrl(dataDir) });
  await c.connect();
  let n = 0;
  try {
    return (
      (
        await c.query(
          sql.replace(/\?/g, () => `$${++n}`),
          params,
        )
      ).rowCount ?? 0
    );
  } finally {
    await c.end();
  }
}
