/**
 * Real programs the real-client tests talk to (Debian's prometheus, prometheus-alertmanager,
 * apprise, python3-aiosmtpd): installed by the suite's peer installer, run as children of the test
 * process on loopback, each stopped on teardown (and killed when the process exits, whatever
 * happened). A missing program is installed, never skipped.
 */

import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const INSTALLER = path.join(ROOT, 'scripts/peers/install.sh');

/** Debian's own interpreter: python3-aiosmtpd is installed for it, not for another python3 on PATH. */
export const DEBIAN_PYTHON = '/usr/bin/python3';

/**
 * Makes sure `ready()` holds, running scripts/peers/install.sh (one installer at a time) when it
 * does not yet; throws when it still does not, so a test fails rather than skips.
 */
export function ensurePeer(what: string, ready: () => boolean): void {
  if (ready()) return;
  if (process.getuid?.() !== 0)
    throw new Error(`${what} is missing and installing it needs root: run bash scripts/peers/install.sh`);
  execFileSync('flock', ['/tmp/herald-peers.lock', 'bash', INSTALLER], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 600_000,
  });
  if (!ready()) throw new Error(`${what} is still missing after scripts/peers/install.sh`);
}

/** `ensurePeer` for an executable file. */
export function ensureBinary(file: string): string {
  ensurePeer(file, () => existsSync(file));
  return file;
}

export { freePort } from '../../scripts/peers/ports.ts';

/** A fresh temporary folder, removed by `cleanup`. */
export function scratch(prefix: string): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), `herald-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The environment for a peer: no proxy settings, so loopback requests go straight to loopback. */
export function peerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const k of Object.keys(env)) if (/^(https?|all|no)_proxy$/i.test(k)) delete env[k];
  return env;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

export interface Peer {
  child: ChildProcess;
  /** What the peer wrote so far, stdout and stderr interleaved (the last 64 KiB). */
  output(): string;
  /** Lines of stdout so far. */
  lines(): string[];
  exited(): boolean;
  /** SIGTERM, then SIGKILL after 5 s; resolves once the process is gone. */
  stop(): Promise<void>;
}

const MAX_OUTPUT = 64 * 1024;

/** Starts `bin` with `args` as a child of this process. */
export function startPeer(bin: string, args: string[], o: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Peer {
  const child = spawn(bin, args, { env: o.env ?? peerEnv(), cwd: o.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  let stdout = '';
  const keep = (s: string) => {
    output = (output + s).slice(-MAX_OUTPUT);
  };
  child.stdout!.on('data', (d: Buffer) => {
    const s = d.toString('utf8');
    stdout += s;
    keep(s);
  });
  child.stderr!.on('data', (d: Buffer) => keep(d.toString('utf8')));
  child.once('error', (err) => keep(`\n[spawn failed: ${err.message}]\n`));
  const gone = new Promise<void>((r) =>
    child.once('close', () => {
      children.delete(child);
      r();
    }),
  );
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  return {
    child,
    output: () => output,
    lines: () => stdout.split('\n').filter(Boolean),
    exited,
    async stop() {
      if (!exited() && child.pid !== undefined) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await gone;
        clearTimeout(timer);
      }
      children.delete(child);
    },
  };
}

/**
 * Polls `probe` every 50 ms until it returns a truthy value. Throws after `ms`, or at once when
 * `peer` has exited, with the peer's output in the message.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  ms: number,
  peer?: Peer,
): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    let v: T | undefined;
    try {
      v = await probe();
    } catch {
      v = undefined;
    }
    if (v) return v as NonNullable<T>;
    if (peer?.exited())
      throw new Error(`${what}: the peer exited (${peer.child.exitCode ?? peer.child.signalCode})\n${peer.output()}`);
    if (Date.now() > end)
      throw new Error(`timed out after ${ms} ms waiting for ${what}${peer ? `\n${peer.output()}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** GET `url` and parse JSON; undefined on any failure (for polling). */
export async function getJson(url: string): Promise<any> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return res.ok ? await res.json() : undefined;
  } catch {
    return undefined;
  }
}
