/**
 * The test acting as a supervisor: runs `core/src/main.ts` as a child process (the Node running
 * the tests), and starts it again whenever it exits with code 75 (EX_TEMPFAIL, a restart request).
 */
import { type ChildProcess, spawn } from 'node:child_process';

const root = new URL('../..', import.meta.url).pathname;

export class SupervisedChild {
  readonly env: Record<string, string>;
  /** Exit codes of the children so far, in order. */
  readonly exits: (number | null)[] = [];
  /** Everything the children wrote to standard error (JSON log lines). */
  stderr = '';
  url = '';
  private child?: ChildProcess;
  private listening?: { resolve: (url: string) => void; reject: (err: Error) => void };
  private stopping = false;

  constructor(env: Record<string, string>) {
    this.env = env;
  }

  /** Starts a child and resolves with its base URL once it listens. */
  start(): Promise<string> {
    const p = new Promise<string>((resolve, reject) => {
      this.listening = { resolve, reject };
    });
    this.spawn();
    return p;
  }

  private spawn(): void {
    const child = spawn(process.execPath, ['core/src/main.ts'], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE,
        SERVICE_SUPERVISED: 'true',
        ...this.env,
      },
    });
    this.child = child;
    let buf = '';
    child.stderr!.on('data', (c: Buffer) => {
      const text = c.toString('utf8');
      this.stderr += text;
      buf += text;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          const o = JSON.parse(line);
          if (o.msg === 'listening' && o.url) {
            this.url = o.url;
            this.listening?.resolve(o.url);
          }
        } catch {
          /* not a log line */
        }
      }
    });
    child.on('exit', (code) => {
      this.exits.push(code);
      if (code === 75 && !this.stopping) {
        this.spawn();
        return;
      }
      this.listening?.reject(
        new Error(`the service exited with ${code} before listening:\n${this.stderr.slice(-2000)}`),
      );
    });
  }

  /** Resolves with the URL of the next child to listen (after a restart). */
  nextStart(ms = 20_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no restart within ${ms} ms:\n${this.stderr.slice(-2000)}`)), ms);
      this.listening = {
        resolve: (u) => {
          clearTimeout(timer);
          resolve(u);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
    });
  }

  /** SIGTERM, and the exit code. */
  async stop(): Promise<number | null> {
    this.stopping = true;
    const child = this.child;
    if (!child || child.exitCode !== null) return child?.exitCode ?? null;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    return exited;
  }
}
