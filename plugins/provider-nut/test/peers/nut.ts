/**
 * A real NUT server on loopback for tests: Debian's `upsd` with the `dummy-ups` driver reading a
 * `.dev` file, in a private config folder (nothing under /etc/nut is touched).
 *
 * Needs root: installs `nut-server` and `nut-client` with apt-get when `/lib/nut/dummy-ups` is
 * missing, and runs the daemons with `-u root` in the foreground, as children of this process.
 *
 * @example
 * ```ts
 * const nut = await startNut();
 * await nut.setStatus({ 'ups.status': 'OB DISCHRG' });
 * await nut.stop();
 * ```
 */

import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const NUT_BIN = '/lib/nut';
export const NUT_UPS = 'test';
export const NUT_USER = 'monuser';
export const NUT_PASSWORD = 'nut-test-secret';

export interface NutPeer {
  port: number;
  ups: string;
  username: string;
  password: string;
  /** Merges `vars` into the simulated UPS and waits until upsd serves every one of them. */
  setStatus(vars: Record<string, string>): Promise<void>;
  /** Stops upsd only (the driver keeps running): clients see a refused connection. */
  stopServer(): Promise<void>;
  /** Starts upsd again on the same port and waits until it serves the UPS. */
  startServer(): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Installs the Debian packages once; refuses politely without root. */
export function ensureNutInstalled(): void {
  if (existsSync(`${NUT_BIN}/dummy-ups`) && existsSync(`${NUT_BIN}/upsd`)) return;
  if (process.getuid?.() !== 0)
    throw new Error('NUT is not installed and installing it needs root (apt-get install nut-server nut-client)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update'], { stdio: 'ignore', env });
  execFileSync('apt-get', ['install', '-y', 'nut-server', 'nut-client'], { stdio: 'ignore', env });
}

/**
 * A loopback port nothing listens on right now, below the kernel's range of ephemeral ports (32768–60999 by
 * default): one the kernel hands out for port 0 it may also give a parallel test's outgoing connection as its source
 * port before the server started here listens on it.
 */
async function freePort(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port between 20000 and 32000 in 50 tries');
}

/** `GET VAR <ups> <name>` over a raw socket (independent of the code under test); undefined on any failure. */
function getVar(port: number, name: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    let buf = '';
    const done = (v: string | undefined) => {
      clearTimeout(timer);
      s.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done(undefined), 1000);
    s.on('error', () => done(undefined));
    s.on('connect', () => s.write(`GET VAR ${NUT_UPS} ${name}\n`));
    s.on('data', (d) => {
      buf += d.toString();
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      const m = /^VAR \S+ \S+ "(.*)"$/.exec(buf.slice(0, nl).trim());
      done(m ? m[1]!.replace(/\\(.)/g, '$1') : undefined);
    });
  });
}

async function until(what: string, timeoutMs: number, cond: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`NUT peer: timed out waiting for ${what}`);
    await sleep(100);
  }
}

function devFile(vars: Record<string, string>): string {
  return `${Object.entries(vars)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n')}\n`;
}

/** Starts dummy-ups and upsd on a free loopback port. */
export async function startNut(initial: Record<string, string> = {}): Promise<NutPeer> {
  ensureNutInstalled();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'herald-nut-'));
  const state = path.join(dir, 'state');
  await mkdir(state, { mode: 0o700 });
  const port = await freePort();
  const vars: Record<string, string> = {
    'ups.status': 'OL',
    'battery.charge': '100',
    'battery.runtime': '3600',
    'ups.mfr': 'Herald',
    'ups.model': 'Test UPS',
    ...initial,
  };
  await writeFile(path.join(dir, 'nut.conf'), 'MODE=standalone\n');
  await writeFile(
    path.join(dir, 'ups.conf'),
    `[${NUT_UPS}]\n  driver = dummy-ups\n  port = ${path.join(dir, 'ups.dev')}\n  desc = "Herald test UPS"\n  ` +
      `pollinterval = 1\n`,
  );
  await writeFile(path.join(dir, 'upsd.conf'), `LISTEN 127.0.0.1 ${port}\nSTATEPATH ${state}\n`, { mode: 0o600 });
  await writeFile(path.join(dir, 'upsd.users'), `[${NUT_USER}]\n  password = ${NUT_PASSWORD}\n  upsmon secondary\n`, {
    mode: 0o600,
  });
  await writeFile(path.join(dir, 'ups.dev'), devFile(vars));
  const env = { ...process.env, NUT_CONFPATH: dir, NUT_STATEPATH: state, NUT_ALTPIDPATH: state };

  const children = new Set<ChildProcess>();
  const run = (bin: string, args: string[]): ChildProcess => {
    const child = spawn(path.join(NUT_BIN, bin), args, { env, stdio: 'ignore' });
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  };
  const kill = async (child: ChildProcess | undefined): Promise<void> => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(3000)]);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  };

  const driver = run('dummy-ups', ['-a', NUT_UPS, '-u', 'root', '-F']);
  let upsd: ChildProcess | undefined;
  const serves = async (want: Record<string, string>) => {
    for (const [k, v] of Object.entries(want)) if ((await getVar(port, k)) !== v) return false;
    return true;
  };
  // Until the driver has read ups.dev, upsd serves `ups.status: WAIT`; wait for the real values.
  const startServer = async () => {
    upsd = run('upsd', ['-u', 'root', '-F']);
    await until('upsd to serve the UPS', 40_000, () => serves(vars));
  };
  const stop = async () => {
    await kill(upsd);
    await kill(driver);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await until('the driver socket', 10_000, async () => existsSync(path.join(state, `dummy-ups-${NUT_UPS}`)));
    await startServer();
  } catch (err) {
    await stop();
    throw err;
  }

  let mtime = 0;
  return {
    port,
    ups: NUT_UPS,
    username: NUT_USER,
    password: NUT_PASSWORD,
    async setStatus(next) {
      Object.assign(vars, next);
      const file = path.join(dir, 'ups.dev');
      await writeFile(file, devFile(vars));
      // dummy-ups rereads the file when its mtime changes, at one-second resolution: two writes in the
      // same second would look unchanged, so every write moves the mtime forward by whole seconds.
      mtime = Math.max(mtime + 2, Math.floor(Date.now() / 1000) + 1);
      await utimes(file, mtime, mtime);
      await until(
        Object.entries(next)
          .map(([k, v]) => `${k} = ${v}`)
          .join(', '),
        15_000,
        () => serves(next),
      );
    },
    async stopServer() {
      await kill(upsd);
      upsd = undefined;
    },
    startServer,
    stop,
  };
}
