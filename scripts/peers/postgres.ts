/**
 * A real, throwaway PostgreSQL cluster on loopback for tests: `initdb` into a temporary folder,
 * `pg_ctl start` on a free 127.0.0.1 port with its Unix socket in the same folder, trust
 * authentication for loopback. Nothing under /etc/postgresql or /var/lib/postgresql is touched.
 *
 * As root (CI): installs Debian's `postgresql` with apt-get when no `initdb` is found, hands the
 * folder to the `postgres` user and runs the server tools as that user (`runuser`), because the
 * server refuses to run as root. As any other user the tools run as that user.
 *
 * Durability settings are off (fsync, synchronous_commit, full_page_writes): this cluster lives
 * for one test run and speed matters more than surviving a power cut.
 *
 * @example
 * ```ts
 * const pg = await startPostgres();
 * const url = pg.url(await pg.createDatabase());   // postgres://postgres@127.0.0.1:PORT/herald_test_…
 * await pg.stop();
 * ```
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './ports.ts';

export interface PostgresPeer {
  /** Connection URL of a database of this cluster (default: the `postgres` maintenance database). */
  url(dbName?: string): string;
  /** Creates a fresh, empty database and resolves with its name. */
  createDatabase(): Promise<string>;
  /** The folder holding the server binaries (pg_dump and pg_restore live there too). */
  binDir: string;
  stop(): Promise<void>;
  /** The same, synchronously: usable from a process `exit` handler. */
  stopSync(): void;
}

const SUPERUSER = 'postgres';

/** The newest `/usr/lib/postgresql/<ver>/bin` holding initdb, if any. */
export function findPgBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(root, versions[0]!, 'bin') : undefined;
}

function ensureInstalled(): string {
  const found = findPgBin();
  if (found) return found;
  if (process.getuid?.() !== 0)
    throw new Error('PostgreSQL is not installed and installing it needs root (apt-get install postgresql)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'postgresql'], { stdio: 'ignore', env });
  const bin = findPgBin();
  if (!bin) throw new Error('apt-get installed postgresql but no initdb was found under /usr/lib/postgresql');
  return bin;
}

/** Runs a server tool as the `postgres` user when we are root, as ourselves otherwise. */
function runTool(bin: string, tool: string, args: string[], cwd: string): void {
  const asRoot = process.getuid?.() === 0;
  const [cmd, argv] = asRoot
    ? ['runuser', ['-u', SUPERUSER, '--', path.join(bin, tool), ...args]]
    : [path.join(bin, tool), args];
  const r = spawnSync(cmd, argv, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8' },
  });
  if (r.status !== 0)
    throw new Error(`${tool} failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout || '').trim().slice(0, 2000)}`);
}

/**
 * A detached watchdog that stops the cluster and removes its folder once process `pid` is gone,
 * so a test process killed outright (a tap timeout) does not leave a server behind.
 */
function watchdog(pid: number, bin: string, data: string, dir: string): void {
  const pgCtl = `${process.getuid?.() === 0 ? `runuser -u ${SUPERUSER} -- ` : ''}${path.join(bin, 'pg_ctl')}`;
  const script =
    `while kill -0 ${pid} 2>/dev/null; do sleep 1; done; [ -d '${data}' ] && ${pgCtl} -D '${data}' -m immediate -w ` +
    `stop >/dev/null 2>&1; rm -rf '${dir}'`;
  spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' }).unref();
}

/**
 * Starts a fresh cluster and resolves once it accepts connections. It lives until `stop()`, or
 * until this process ends, whichever comes first.
 */
export async function startPostgres(): Promise<PostgresPeer> {
  const bin = ensureInstalled();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-pg-'));
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', SUPERUSER], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', SUPERUSER], { encoding: 'utf8' }).trim());
    fs.chmodSync(dir, 0o700);
    fs.chownSync(dir, uid, gid);
  }
  const data = path.join(dir, 'data');
  const port = await freePort();
  try {
    runTool(
      bin,
      'initdb',
      [
        '-D',
        data,
        '-U',
        SUPERUSER,
        '--auth-local=trust',
        '--auth-host=trust',
        '-E',
        'UTF8',
        '--no-sync',
        '--no-instructions',
      ],
      dir,
    );
    const opts = [
      `-c listen_addresses=127.0.0.1`,
      `-c port=${port}`,
      `-c unix_socket_directories=${dir}`,
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      '-c max_connections=400',
      '-c shared_buffers=64MB',
    ].join(' ');
    runTool(
      bin,
      'pg_ctl',
      ['-D', data, '-l', path.join(dir, 'server.log'), '-o', opts, '-w', '-t', '60', 'start'],
      dir,
    );
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  watchdog(process.pid, bin, data, dir);
  const url = (db = 'postgres') => `postgres://${SUPERUSER}@127.0.0.1:${port}/${db}`;
  let stopped = false;
  const stopSync = () => {
    if (stopped) return;
    stopped = true;
    try {
      runTool(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'], dir);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  return {
    url,
    binDir: bin,
    async createDatabase() {
      const name = `herald_test_${crypto.randomBytes(6).toString('hex')}`;
      const c = new pg.Client({ connectionString: url() });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      return name;
    },
    async stop() {
      stopSync();
    },
    stopSync,
  };
}
