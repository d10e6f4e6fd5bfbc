/**
 * Strings and formatting for the two languages. Every visible string comes from
 * `locales/<lang>/web.json` and the fragments in `locales/<lang>/web/*.json` (one per area of the
 * client, merged; a key lives in one file only), bundled and looked up by a dotted key. Plural forms live under
 * `<key>_<category>` with the categories of `Intl.PluralRules` for the language. Each language
 * comes in two chunks: the strings a first visit shows (the shell, the login, the overview), loaded
 * before first render and on switching, and the rest (`loadMore`), loaded with any other page.
 */

export type Locale = 'en' | 'ru';
export const LOCALES: Locale[] = ['en', 'ru'];
const STORAGE_KEY = 'herald.locale';

type Tree = { [k: string]: string | Tree };

/** Flattens `{ a: { b: "x" } }` to `{ "a.b": "x" }`. Exported for the locale tests. */
export function flatten(tree: Tree, prefix = '', out: Record<string, string> = {}): Record<string, string> {
  for (const [k, v] of Object.entries(tree)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'string') out[key] = v;
    else flatten(v, key, out);
  }
  return out;
}

/** A language's first-visit strings (core/web/src/locales/web-<lang>.ts, split by locales/first-visit.ts). */
const loaders: Record<Locale, () => Promise<Tree[]>> = {
  en: () => import('../locales/web-en.ts').then((m) => m.default as Tree[]),
  ru: () => import('../locales/web-ru.ts').then((m) => m.default as Tree[]),
};
/** The rest of a language's strings (core/web/src/locales/more-<lang>.ts). */
const more: Record<Locale, () => Promise<Tree[]>> = {
  en: () => import('../locales/more-en.ts').then((m) => m.default as Tree[]),
  ru: () => import('../locales/more-ru.ts').then((m) => m.default as Tree[]),
};
const dictionaries: Partial<Record<Locale, Record<string, string>>> = {};
const complete = new Set<Locale>();
const completing: Partial<Record<Locale, Promise<void>>> = {};

/** Fetches a language's first-visit strings once. */
export async function loadLocale(l: Locale): Promise<void> {
  if (dictionaries[l]) return;
  const out: Record<string, string> = {};
  for (const tree of await loaders[l]()) flatten(tree, '', out);
  dictionaries[l] = out;
}

/** Fetches the rest of a language's strings once (every page but the overview loads them first: ui/lazy.tsx). */
export function loadMore(l: Locale = current): Promise<void> {
  if (complete.has(l)) return Promise.resolve();
  completing[l] ??= (async () => {
    await loadLocale(l);
    const rest: Record<string, string> = {};
    for (const tree of await more[l]()) flatten(tree, '', rest);
    Object.assign(dictionaries[l]!, rest);
    complete.add(l);
  })().catch((err) => {
    delete completing[l];
    throw err;
  });
  return completing[l]!;
}

function initialLocale(): Locale {
  try {
    const saved = localStorage.getItem(STORAGE_KEY);
    if (saved === 'en' || saved === 'ru') return saved;
  } catch {
    /* storage blocked: fall through */
  }
  return navigator.language?.toLowerCase().startsWith('ru') ? 'ru' : 'en';
}

let current: Locale = initialLocale();
let plural = new Intl.PluralRules(current);
const listeners = new Set<(l: Locale) => void>();

export const locale = (): Locale => current;

/** Switches the language (loading it first), remembers it, and tells the listeners (the app re-renders). */
export async function setLocale(l: Locale): Promise<void> {
  if (l === current && dictionaries[l]) return;
  await loadLocale(l);
  // A page beyond the overview is showing (or was): it needs the rest of the new language too.
  if (complete.has(current)) await loadMore(l);
  current = l;
  plural = new Intl.PluralRules(l);
  try {
    localStorage.setItem(STORAGE_KEY, l);
  } catch {
    /* not remembered, still switched */
  }
  document.documentElement.lang = l;
  for (const fn of listeners) fn(l);
}

export function onLocale(fn: (l: Locale) => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export type Vars = Record<string, string | number>;

function fill(s: string, vars?: Vars): string {
  if (!vars) return s;
  return s.replace(/\{\{\s*(\w+)\s*\}\}/g, (m, name: string) =>
    name in vars ? (typeof vars[name] === 'number' ? num(vars[name] as number) : String(vars[name])) : m,
  );
}

/**
 * The string for `key` in the current language (English, then the key itself, as fallbacks).
 * With a numeric `count` var, `<key>_<plural category>` is used when it exists.
 */
export function t(key: string, vars?: Vars): string {
  const dict = dictionaries[current] ?? {};
  let s: string | undefined;
  if (vars && typeof vars.count === 'number') s = dict[`${key}_${plural.select(vars.count)}`] ?? dict[`${key}_other`];
  s ??= dict[key];
  if (s === undefined) {
    // Not among the first visit's strings: fetch the rest and draw again (blank meanwhile).
    if (!complete.has(current)) {
      const l = current;
      void loadMore(l).then(() => {
        if (l === current) for (const fn of listeners) fn(l);
      });
      return '';
    }
    console.warn(`missing string ${key}`);
    return key;
  }
  return fill(s, vars);
}

/** True when a string exists for `key` (used for optional, data-driven labels). */
export const has = (key: string): boolean => key in (dictionaries[current] ?? {});

/** `t(key)` when the key exists, otherwise `fallback` (e.g. a status value from the server). */
export const tOr = (key: string, fallback: string): string => (has(key) ? t(key) : fallback);

const tag = () => (current === 'ru' ? 'ru-RU' : 'en-GB');

export const num = (n: number): string => new Intl.NumberFormat(tag()).format(n);

export function bytes(n: number): string {
  const units = ['byte', 'kilobyte', 'megabyte', 'gigabyte'] as const;
  let i = 0;
  let v = n;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return new Intl.NumberFormat(tag(), {
    style: 'unit',
    unit: units[i],
    unitDisplay: 'short',
    maximumFractionDigits: i ? 1 : 0,
  }).format(v);
}

/** Date and time in the browser's zone, e.g. "3 Mar 2025, 14:05". */
export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return new Intl.DateTimeFormat(tag(), { dateStyle: 'medium', timeStyle: 'short' }).format(d);
}

export function date(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso.length === 10 ? `${iso}T00:00:00` : iso);
  if (Number.isNaN(d.getTime())) return iso;
  return new Intl.DateTimeFormat(tag(), { dateStyle: 'medium' }).format(d);
}

export function time(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Intl.DateTimeFormat(tag(), { timeStyle: 'short' }).format(new Date(iso));
}

/** "in 3 hours", "5 minutes ago". */
export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const diff = (new Date(iso).getTime() - now) / 1000;
  const rtf = new Intl.RelativeTimeFormat(tag(), { numeric: 'auto' });
  const abs = Math.abs(diff);
  if (abs < 60) return rtf.format(Math.round(diff), 'second');
  if (abs < 3600) return rtf.format(Math.round(diff / 60), 'minute');
  if (abs < 86400) return rtf.format(Math.round(diff / 3600), 'hour');
  return rtf.format(Math.round(diff / 86400), 'day');
}
