/**
 * What the command line prints: results on standard output, errors on standard error as
 * `herald: <message>`. A refusal by the service's own rules (an HttpError: weak password, taken
 * email, a backup that does not validate) is printed with the problem's text, the API's detail in
 * English and the web client's text for its code in other languages, and its field errors.
 */
import { HttpError } from '../http/problem.ts';
import type { Messages, Params } from './i18n.ts';

/** Exit codes: 0 done, 1 failed or refused, 2 the command line itself was wrong, 130 cancelled at a prompt. */
export const EXIT = { ok: 0, failed: 1, usage: 2, cancelled: 130 } as const;

/** A failure the command line words itself: a key of cli.json with its values, and the exit code. */
export class CliError extends Error {
  readonly key: string;
  readonly params?: Params;
  readonly exitCode: number;
  constructor(key: string, params?: Params, exitCode: number = EXIT.failed) {
    super(key);
    this.key = key;
    this.params = params;
    this.exitCode = exitCode;
  }
}

/** Problem codes whose text in the web client's locales leaves out what the API's detail names. */
const SPECIFIC_DETAIL = new Set([
  'invalid_backup',
  'invalid_json',
  'json_limits_exceeded',
  'forbidden_key',
  'restore_conflict',
  'validation_failed',
  'unknown_format_version',
  'newer_service_version',
  'no_admin_left',
  'backup_secrets_unreadable',
]);

/**
 * The lines a refusal by the service's rules prints: the API's detail, or the web client's text for its code in this
 * language.
 */
export function problemLines(err: HttpError, m: Messages): string[] {
  const translated = m.problemText(err.code, err.params);
  // Where the translated sentence is general and the API's detail names the very problem (which
  // field, which conflict), the detail follows as it is.
  return translated ? (SPECIFIC_DETAIL.has(err.code) ? [translated, `  ${err.message}`] : [translated]) : [err.message];
}

/** The lines an error prints (without the `herald: ` prefix), and the exit code. */
export async function describeError(err: unknown, m: Messages): Promise<{ lines: string[]; exitCode: number }> {
  if (err instanceof CliError) return { lines: [m.t(err.key, err.params)], exitCode: err.exitCode };
  if (err instanceof HttpError) return { lines: problemLines(err, m), exitCode: EXIT.failed };
  // Loaded only now: a command that fails in no such way (or --help) never loads them.
  const [{ ConfigurationError }, { PluginLoadError }, { PluginDirError }] = await Promise.all([
    import('../config/config.ts'),
    import('../plugins/resolve.ts'),
    import('../plugins/plugin-dir.ts'),
  ]);
  if (err instanceof ConfigurationError)
    return { lines: [m.t('errors.configuration', { reason: err.message })], exitCode: EXIT.failed };
  if (err instanceof PluginLoadError || err instanceof PluginDirError)
    return { lines: [m.t('errors.plugin_load', { reason: err.message })], exitCode: EXIT.failed };
  const e = err as NodeJS.ErrnoException;
  return { lines: [m.t('errors.unexpected', { reason: e?.message ?? String(err) })], exitCode: EXIT.failed };
}

export async function printError(err: unknown, m: Messages): Promise<number> {
  const { lines, exitCode } = await describeError(err, m);
  process.stderr.write(lines.map((l, i) => (i === 0 ? `herald: ${l}` : l)).join('\n') + '\n');
  return exitCode;
}

export const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};
export const note = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** Columns padded to their widest cell (by characters, which is what a terminal shows for these texts). */
export function table(head: string[], rows: string[][]): string[] {
  const widths = head.map((h, i) => Math.max([...h].length, ...rows.map((r) => [...(r[i] ?? '')].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat(widths[i]! - [...c].length)))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.map(line)];
}

export function printJson(value: unknown): void {
  out(JSON.stringify(value, null, 2));
}
