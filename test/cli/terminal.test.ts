/**
 * The command line on a terminal, through a pseudo-terminal (util-linux `script`): the password is
 * asked for hidden (a mask character per key, never the text), checked as it is typed, asked twice;
 * a backup shows a progress bar on a terminal and none when its output is a pipe.
 */

import { spawn } from 'node:child_process';
import t from 'tap';
import { startService } from '../helpers/service.ts';
import { CLI_COMMAND, herald, ROOT, serviceEnv } from './support.ts';

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences are what is removed
const ESCAPES = /\u001b\[[0-9;?]*[A-Za-z]|\u001b[()][A-Z0-9]|\r/g;
const plain = (s: string) => s.replace(ESCAPES, '');
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const WAIT_MS = 30_000;

/** `herald <args>` on a pseudo-terminal of 120 columns; what it shows, what is typed into it, its exit code. */
function onTerminal(args: string[], env: Record<string, string>) {
  const command = `stty cols 120 rows 40; exec ${[...CLI_COMMAND, ...args].map(quote).join(' ')}`;
  const child = spawn('script', ['-qefc', command, '/dev/null'], {
    env: { ...env, TERM: 'xterm-256color' },
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let shown = '';
  type Waiter = { re: RegExp; resolve: () => void; reject: (err: Error) => void };
  const waiters: Waiter[] = [];
  const check = () => {
    for (const w of [...waiters])
      if (w.re.test(plain(shown))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
  };
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    shown += d;
    check();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    shown += d;
    check();
  });
  const exit = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      child.stdin.destroy();
      check();
      for (const w of waiters.splice(0))
        w.reject(new Error(`the command ended before showing ${w.re}:\n${plain(shown)}`));
      resolve(code);
    }),
  );
  return {
    shown: () => plain(shown),
    raw: () => shown,
    type: (s: string) => {
      child.stdin.write(s);
    },
    /** Resolves once the screen shows `re`; fails after WAIT_MS, or when the process ends first. */
    waitFor: (re: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`the terminal never showed ${re}; it shows:\n${plain(shown)}`));
        }, WAIT_MS);
        const w: Waiter = {
          re,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
          reject: (err) => {
            clearTimeout(timer);
            reject(err);
          },
        };
        waiters.push(w);
        check();
      }),
    exit,
  };
}

t.test('on a terminal', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const env = await serviceEnv(s.dataDir);

  t.test('the password is asked for hidden, checked as typed, and asked twice', async (t) => {
    const u = await s.user();
    const secret = 'Correct-Horse-7';
    const term = onTerminal(['user', 'reset-password', u.email], env);
    await term.waitFor(/New password for .*\(8 characters or more, at most 72 bytes\)/);
    term.type('short7\r');
    await term.waitFor(/The password must be at least 8 characters long\./);
    term.type(secret);
    await term.waitFor(new RegExp(`[▪•]{${secret.length}}`));
    term.type('\r');
    await term.waitFor(/The same password again/);
    term.type('Something-else-1\r');
    await term.waitFor(/The two passwords differ; type the same one again\./);
    term.type(`${secret}\r`);
    t.equal(await term.exit, 0, term.shown());
    t.match(term.shown(), new RegExp(`Password of ${u.email.replace(/[.]/g, '\\.')} set\\.`));
    for (const typed of [secret, 'short7', 'Something-else-1'])
      t.notOk(term.raw().includes(typed), `"${typed}" never appears on the screen`);
    t.equal(
      (await s.request('POST', '/api/auth/login', { body: { email: u.email, password: secret } })).status,
      200,
      'the password typed is the one set',
    );
  });

  t.test('a cancelled prompt changes nothing', async (t) => {
    const u = await s.user();
    const term = onTerminal(['user', 'reset-password', u.email], env);
    await term.waitFor(/New password for/);
    term.type('abc\u0003');
    t.equal(await term.exit, 130);
    t.match(term.shown(), /herald: cancelled; nothing was changed\./);
    t.equal(
      (await s.request('POST', '/api/auth/login', { body: { email: u.email, password: 'user password 1' } })).status,
      200,
      'the old password still works',
    );
  });

  t.test('a progress bar on a terminal, none on a pipe', async (t) => {
    const term = onTerminal(['backup', 'create'], env);
    t.equal(await term.exit, 0, term.shown());
    t.match(term.raw(), /━/, 'the bar is drawn');
    t.match(term.shown(), /Backup written: \S+backup-\d+T\d+Z\.json/);
    const piped = await herald(['backup', 'create'], env);
    t.equal(piped.code, 0, piped.stderr);
    t.notOk(
      piped.stdout.includes('━') || piped.stdout.includes('\u001b'),
      'no bar and no escape sequence when the output is not a terminal',
    );
    t.match(
      piped.stdout,
      /^Backup written: \S+backup-\d+T\d+Z\.json \(.*\)\nSecrets and password hashes were left out/,
    );
  });
});
