/**
 * Talking to the operator's terminal: the hidden password prompt (@clack/prompts, which shows a
 * mask character per key and never the text), the password read from standard input for scripts
 * (`--password-stdin`), and a progress bar shown only when the output is a terminal.
 */
import { password as askPassword, isCancel, progress } from '@clack/prompts';
import { checkPassword } from '../auth/passwords.ts';
import { HttpError } from '../http/problem.ts';
import type { Messages } from './i18n.ts';
import { CliError, EXIT, problemLines } from './output.ts';

/** More than any password the rules allow (72 bytes); reading stops there. */
const STDIN_LIMIT = 64 * 1024;

/** The password piped to standard input: all of it, less one final line break. */
export async function passwordFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size > STDIN_LIMIT) break;
  }
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** The password rules' verdict as the text to show, or undefined when the password passes. */
function passwordProblem(value: string, m: Messages): string | undefined {
  try {
    checkPassword(value);
    return undefined;
  } catch (err) {
    if (err instanceof HttpError) return problemLines(err, m)[0];
    throw err;
  }
}

/**
 * A new password: from standard input with `stdin`, else asked twice on the terminal (hidden, the
 * rules checked as it is typed in). Never from the command line, where it would stay in the shell's
 * history and show in the process list.
 */
export async function newPassword(m: Messages, o: { stdin: boolean; email: string }): Promise<string> {
  if (o.stdin) {
    const value = await passwordFromStdin();
    checkPassword(value);
    return value;
  }
  if (!process.stdin.isTTY) throw new CliError('password.no_terminal', undefined, EXIT.usage);
  const output = process.stdout.isTTY ? process.stdout : process.stderr;
  const first = await askPassword({
    message: m.t('password.prompt', { email: o.email }),
    output,
    clearOnError: true,
    validate: (v) => passwordProblem(v ?? '', m),
  });
  if (isCancel(first)) throw new CliError('password.cancelled', undefined, EXIT.cancelled);
  const again = await askPassword({
    message: m.t('password.repeat'),
    output,
    clearOnError: true,
    validate: (v) => (v === first ? undefined : m.t('password.mismatch')),
  });
  if (isCancel(again)) throw new CliError('password.cancelled', undefined, EXIT.cancelled);
  return first;
}

export interface Progress {
  advance(step: number, message?: string): void;
  /** Ends the bar with a closing line (nothing when there is no bar). */
  done(message?: string): Promise<void>;
  failed(): void;
}

const NO_BAR: Progress = { advance() {}, async done() {}, failed() {} };

/** How often the bar is drawn (clack draws it on a timer, not on each step). */
const FRAME_MS = 80;
/** The longest a finished bar waits for its first frame (it is due FRAME_MS after the start). */
const FIRST_FRAME_WAIT_MS = 1000;

/**
 * A progress bar of `max` steps on standard output when it is a terminal; otherwise nothing is
 * drawn. Work quicker than a frame still shows the bar once, full, before its closing line.
 */
export function progressBar(max: number, message: string): Progress {
  if (!process.stdout.isTTY) return NO_BAR;
  const stdout = process.stdout;
  // Standard output as clack sees it: each write after the start is a frame of the bar (nothing else writes there
  // meanwhile).
  let starting = true;
  let drawn!: () => void;
  const firstFrame = new Promise<void>((resolve) => {
    drawn = resolve;
  });
  const output = new Proxy(stdout, {
    get(target, prop) {
      if (prop === 'write')
        return (...args: Parameters<typeof stdout.write>) => {
          if (!starting) drawn();
          return target.write(...args);
        };
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const bar = progress({ max: Math.max(1, max), output, style: 'heavy', delay: FRAME_MS });
  bar.start(message);
  starting = false;
  let ended = false;
  return {
    advance(step, text) {
      if (!ended && step > 0) bar.advance(step, text);
    },
    async done(text) {
      if (ended) return;
      ended = true;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        firstFrame,
        new Promise((resolve) => {
          timer = setTimeout(resolve, FIRST_FRAME_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
      bar.stop(text);
    },
    failed() {
      if (!ended) {
        ended = true;
        bar.error();
      }
    },
  };
}
