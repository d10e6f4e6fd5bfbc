/**
 * The real Debian broker for tests: `/usr/sbin/mosquitto` on a free loopback port with a config,
 * password file and persistence folder of its own, plus the `mosquitto_pub`/`mosquitto_sub`
 * clients. Persistence is on, so a stop and start keeps the sessions and their queued QoS 1
 * messages, as a restarted production broker does. Every process is a child of the test, stopped
 * by `close()` (and killed when the test process exits).
 */

import type { ChildProcess } from 'node:child_process';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const MOSQUITTO = '/usr/sbin/mosquitto';

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

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

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Waits for `probe` (every 25 ms), at most `ms`; throws `what` with `context()` when it never holds. */
export async function until<T>(
  what: string,
  probe: () => T | Promise<T>,
  ms = 15_000,
  context: () => string = () => '',
): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end)
      throw new Error(`timed out after ${ms} ms waiting for ${what}${context() ? `\n${context()}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface ClientAuth {
  username?: string;
  password?: string;
}

export interface Broker {
  port: number;
  /** `mqtt://127.0.0.1:<port>` */
  url: string;
  /** Everything the broker printed (log lines), across restarts. */
  output(): string;
  running(): boolean;
  /** SIGTERM (the broker writes its persistence file), then waits for the exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port, with the same persistence. */
  start(): Promise<void>;
  /** `mosquitto_pub` one message; resolves once the client exited 0 (at QoS 1: the broker acknowledged it). */
  pub(topic: string, message: string, o?: ClientAuth & { qos?: 0 | 1; retain?: boolean }): Promise<void>;
  /**
   * `mosquitto_sub -v -C count`: resolves `ready` once the broker logged the subscription, `lines`
   * with the `count` lines `topic payload` it printed (or rejects after `timeoutSeconds`).
   */
  sub(
    filter: string,
    count: number,
    o?: ClientAuth & { timeoutSeconds?: number },
  ): Promise<{ lines: Promise<string[]> }>;
  /** Stops the broker and its clients, removes the folder. */
  close(): Promise<void>;
}

/** Starts mosquitto: anonymous access, or only the `users` given (name → password). */
export async function startMosquitto(o: { users?: Record<string, string> } = {}): Promise<Broker> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'herald-mosquitto-'));
  const port = await freePort();
  const lines = [
    `listener ${port} 127.0.0.1`,
    `persistence true`,
    `persistence_location ${dir}/`,
    // A file, flushed per line (stdout into a pipe is block-buffered).
    `log_dest file ${path.join(dir, 'mosquitto.log')}`,
    'log_type all',
    'connection_messages true',
    'max_queued_messages 10000',
  ];
  // As root mosquitto drops to the `mosquitto` user, which cannot write the test's folder.
  if (process.getuid?.() === 0) lines.push('user root');
  if (o.users) {
    const file = path.join(dir, 'passwd');
    let first = true;
    for (const [user, password] of Object.entries(o.users)) {
      await run('mosquitto_passwd', ['-b', ...(first ? ['-c'] : []), file, user, password]);
      first = false;
    }
    lines.push('allow_anonymous false', `password_file ${file}`);
  } else lines.push('allow_anonymous true');
  const conf = path.join(dir, 'mosquitto.conf');
  writeFileSync(conf, `${lines.join('\n')}\n`);

  const logFile = path.join(dir, 'mosquitto.log');
  let out = '';
  const output = () => out + (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  let child: ChildProcess | undefined;
  const clients = new Set<ChildProcess>();
  const alive = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  async function start(): Promise<void> {
    if (alive()) return;
    const c = spawn(MOSQUITTO, ['-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(c);
    child = c;
    c.stdout!.on('data', (d: Buffer) => {
      out += d.toString('utf8');
    });
    c.stderr!.on('data', (d: Buffer) => {
      out += d.toString('utf8');
    });
    c.once('close', () => children.delete(c));
    await until(
      'mosquitto to listen',
      async () => {
        if (c.exitCode !== null) throw new Error(`mosquitto exited (${c.exitCode})\n${output()}`);
        return canConnect(port);
      },
      5000,
      output,
    );
  }

  async function stop(): Promise<void> {
    const c = child;
    if (!c || !alive()) return;
    const gone = new Promise<void>((r) => c.once('close', () => r()));
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
  }

  const auth = (a: ClientAuth = {}) => [
    ...(a.username ? ['-u', a.username] : []),
    ...(a.password ? ['-P', a.password] : []),
  ];

  await start();
  return {
    port,
    url: `mqtt://127.0.0.1:${port}`,
    output,
    running: alive,
    stop,
    start,
    async pub(topic, message, p = {}) {
      await run('mosquitto_pub', [
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-q',
        String(p.qos ?? 1),
        '-t',
        topic,
        '-m',
        message,
        ...(p.retain ? ['-r'] : []),
        ...auth(p),
      ]);
    },
    async sub(filter, count, p = {}) {
      const id = `sub-${randomBytes(4).toString('hex')}`;
      const c = spawn(
        'mosquitto_sub',
        [
          '-h',
          '127.0.0.1',
          '-p',
          String(port),
          '-i',
          id,
          '-t',
          filter,
          '-v',
          '-C',
          String(count),
          '-W',
          String(p.timeoutSeconds ?? 10),
          ...auth(p),
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      children.add(c);
      clients.add(c);
      let stdout = '';
      let stderr = '';
      c.stdout!.on('data', (d: Buffer) => {
        stdout += d.toString('utf8');
      });
      c.stderr!.on('data', (d: Buffer) => {
        stderr += d.toString('utf8');
      });
      const linesOut = new Promise<string[]>((resolve, reject) => {
        c.once('close', (code) => {
          children.delete(c);
          clients.delete(c);
          if (code === 0) resolve(stdout.split('\n').filter(Boolean));
          else reject(new Error(`mosquitto_sub exited ${code}: ${stderr}\nprinted so far:\n${stdout}`));
        });
      });
      linesOut.catch(() => {});
      // The broker logs each subscription as "<client id> <qos> <filter>".
      await until(
        `${id} to subscribe`,
        () => output().includes(`${id} 0 ${filter}`),
        5000,
        () => output().slice(-4000),
      );
      return { lines: linesOut };
    },
    async close() {
      for (const c of clients) c.kill('SIGKILL');
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs a mosquitto client program; rejects with its output when it exits non-zero. */
function run(bin: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { timeout: 10_000 }, (err, stdout, stderr) => {
      if (err)
        reject(
          new Error(
            `${bin} ${args
              .filter((a) => !a.startsWith('-'))
              .slice(0, 2)
              .join(' ')} failed: ${stderr || err.message}`,
          ),
        );
      else resolve(stdout);
    });
  });
}
