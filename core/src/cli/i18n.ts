/**
 * The command line's language: `--lang`, else the POSIX locale variables in their order of
 * precedence (LC_ALL, LC_MESSAGES, LANG), else English. Strings come from
 * `locales/<lang>/cli.json`; the service's problem codes are phrased from the web client's
 * `locales/<lang>/web/problems.json`, the texts the web client shows for the same errors.
 */
import fs from 'node:fs';

export const LANGUAGES = ['en', 'ru'] as const;
export type Lang = (typeof LANGUAGES)[number];

const LOCALES = new URL('../../../locales/', import.meta.url);

type Tree = { [k: string]: string | Tree };
export type Params = Record<string, string | number | boolean | string[] | undefined>;

/** The language asked for on the command line (`--lang x`, `--lang=x`), undefined when none is. */
export function languageArgument(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return undefined;
    if (a === '--lang') return argv[i + 1] ?? '';
    if (a.startsWith('--lang=')) return a.slice('--lang='.length);
  }
  return undefined;
}

/** The language of the environment: the first of LC_ALL, LC_MESSAGES, LANG that is set (`ru_RU.UTF-8` → ru). */
export function languageOfEnvironment(env: NodeJS.ProcessEnv): Lang {
  const value = [env.LC_ALL, env.LC_MESSAGES, env.LANG].find((v) => v !== undefined && v !== '') ?? '';
  const code = value.slice(0, 2).toLowerCase();
  return (LANGUAGES as readonly string[]).includes(code) ? (code as Lang) : 'en';
}

export const isLanguage = (v: string | undefined): v is Lang => (LANGUAGES as readonly string[]).includes(v ?? '');

function readTree(file: URL): Tree {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Tree;
  } catch {
    return {};
  }
}

function lookup(tree: Tree, key: string): string | undefined {
  let node: string | Tree | undefined = tree;
  for (const part of key.split('.')) {
    if (!node || typeof node !== 'object') return undefined;
    node = node[part];
  }
  return typeof node === 'string' ? node : undefined;
}

const fill = (text: string, params: Params = {}): string =>
  text.replace(/\{\{\s*(\w+)\s*\}\}/g, (all, name: string) => {
    const v = params[name];
    if (v === undefined) return all;
    return Array.isArray(v) ? v.join(', ') : String(v);
  });

/** The strings of one language, with English behind every missing one. */
export class Messages {
  readonly lang: Lang;
  private strings: Tree;
  private english: Tree;
  private problems?: Tree;
  private plurals: Intl.PluralRules;

  constructor(lang: Lang) {
    this.lang = lang;
    this.english = readTree(new URL('en/cli.json', LOCALES));
    this.strings = lang === 'en' ? this.english : readTree(new URL(`${lang}/cli.json`, LOCALES));
    this.plurals = new Intl.PluralRules(lang);
  }

  /**
   * The text of `key` (dotted path) with `{{name}}` filled in; `count` picks the plural form (`key_one`, `key_few`…).
   */
  t(key: string, params?: Params): string {
    const count = params?.count;
    const keys = typeof count === 'number' ? [`${key}_${this.plurals.select(count)}`, `${key}_other`, key] : [key];
    for (const tree of [this.strings, this.english]) {
      for (const k of keys) {
        const text = lookup(tree, k);
        if (text !== undefined) return fill(text, params);
      }
    }
    return key;
  }

  /**
   * The text of a service problem code in this language, from the web client's problem texts.
   * Undefined in English: there the problem's own detail, the API's text, is shown instead.
   */
  problemText(code: string, params?: Params): string | undefined {
    if (this.lang === 'en') return undefined;
    this.problems ??= readTree(new URL(`${this.lang}/web/problems.json`, LOCALES));
    const text = lookup(this.problems, `problem.${code}`);
    return text === undefined ? undefined : fill(text, params);
  }

  /** A date and time as the reader writes them. */
  date(iso: string): string {
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso;
    return (
      d.toLocaleString(this.lang === 'ru' ? 'ru-RU' : 'en-GB', {
        dateStyle: 'medium',
        timeStyle: 'medium',
        timeZone: 'UTC',
      }) + ' UTC'
    );
  }

  /** A size in bytes, KiB or MiB. */
  bytes(n: number): string {
    const unit = (k: string) => this.t(`units.${k}`);
    if (n < 1024) return `${n} ${unit('bytes')}`;
    const fmt = (x: number) => x.toLocaleString(this.lang === 'ru' ? 'ru-RU' : 'en-GB', { maximumFractionDigits: 1 });
    if (n < 1024 * 1024) return `${fmt(n / 1024)} ${unit('kib')}`;
    return `${fmt(n / 1024 / 1024)} ${unit('mib')}`;
  }
}
