/**
 * The web client's strings: English and Russian carry the same keys (plural forms per
 * language), the same placeholders, no empty values; every key the code asks for exists, and
 * every key in the files is used.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ROOT, sourceFiles } from './sources.ts';

type Tree = { [k: string]: string | Tree };
const flatten = (tree: Tree, prefix = '', out: Record<string, string> = {}): Record<string, string> => {
  for (const [k, v] of Object.entries(tree)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'string') out[key] = v;
    else flatten(v, key, out);
  }
  return out;
};
/** The main file and the fragments under web/, merged; a key defined in two files is reported. */
const duplicates: string[] = [];
const load = (lang: string) => {
  const dir = path.join(ROOT, 'locales', lang);
  const files = [
    path.join(dir, 'web.json'),
    ...(fs.existsSync(path.join(dir, 'web'))
      ? fs
          .readdirSync(path.join(dir, 'web'))
          .filter((f) => f.endsWith('.json'))
          .sort()
          .map((f) => path.join(dir, 'web', f))
      : []),
  ];
  const out: Record<string, string> = {};
  for (const file of files) {
    for (const [k, v] of Object.entries(flatten(JSON.parse(fs.readFileSync(file, 'utf8'))))) {
      if (k in out) duplicates.push(`${lang}: ${k} (${path.relative(dir, file)})`);
      out[k] = v;
    }
  }
  return out;
};
const LANGS = ['en', 'ru'] as const;
const dicts = { en: load('en'), ru: load('ru') };

const PLURAL = /_(zero|one|two|few|many|other)$/;
/** A key with its plural suffix removed (`events.attempts_few` → `events.attempts`). */
const base = (key: string) => key.replace(PLURAL, '');
const bases = (d: Record<string, string>) => new Set(Object.keys(d).map(base));
const placeholders = (s: string) => [...s.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]).sort();

/** Key sets compared modulo plural forms: missing in one language means a failure. */
export function missingKeys(a: Record<string, string>, b: Record<string, string>): string[] {
  const inB = bases(b);
  return [...bases(a)].filter((k) => !inB.has(k)).sort();
}

t.test('a key is defined in one locale file only', async (t) => {
  t.same(duplicates, []);
});

t.test('both languages have the same keys', async (t) => {
  t.same(missingKeys(dicts.en, dicts.ru), [], 'every English key exists in Russian');
  t.same(missingKeys(dicts.ru, dicts.en), [], 'every Russian key exists in English');
  t.ok(Object.keys(dicts.en).length > 300, 'a full set of strings');
});

t.test('the comparison notices a missing key', async (t) => {
  t.same(missingKeys({ 'a.b': 'x', 'a.c': 'y' }, { 'a.b': 'x' }), ['a.c']);
  t.same(
    missingKeys({ n_one: 'x', n_other: 'y' }, { n_one: 'x', n_few: 'x', n_many: 'x', n_other: 'y' }),
    [],
    'plural forms differ by language',
  );
});

t.test('plural keys carry every form the language needs', async (t) => {
  for (const lang of LANGS) {
    const d = dicts[lang];
    const need = new Intl.PluralRules(lang).resolvedOptions().pluralCategories;
    for (const b of new Set(
      Object.keys(d)
        .filter((k) => PLURAL.test(k))
        .map(base),
    )) {
      const missing = need.filter((c) => !(`${b}_${c}` in d));
      t.same(missing, [], `${lang} ${b} has ${need.join('/')}`);
    }
  }
});

t.test('values are filled and placeholders match', async (t) => {
  for (const lang of LANGS) {
    const empty = Object.entries(dicts[lang])
      .filter(([, v]) => !v.trim())
      .map(([k]) => k);
    t.same(empty, [], `${lang}: no empty strings`);
  }
  const mismatched: string[] = [];
  for (const b of bases(dicts.en)) {
    const of = (d: Record<string, string>) =>
      [
        ...new Set(
          Object.entries(d)
            .filter(([k]) => base(k) === b)
            .flatMap(([, v]) => placeholders(v)),
        ),
      ]
        .sort()
        .join(',');
    if (of(dicts.en) !== of(dicts.ru)) mismatched.push(`${b}: en {${of(dicts.en)}} ru {${of(dicts.ru)}}`);
  }
  t.same(mismatched, [], 'the same placeholders in both languages');
});

t.test('the code and the files agree on the keys', async (t) => {
  const literal = new Set<string>();
  const patterns: RegExp[] = [];
  for (const { text } of sourceFiles()) {
    // t('a.b'), tOr('a.b', …), and route labels: label: 'nav.x'
    for (const m of text.matchAll(/\b(?:t|tOr)\(\s*'([\w.]+)'|\blabel:\s*'([\w.]+)'/g)) literal.add(m[1] ?? m[2]);
    // t(`status.${s}`): any key of that shape
    for (const m of text.matchAll(/\b(?:t|tOr)\(\s*`([^`]+)`/g)) {
      const re = m[1]
        .split(/\$\{[^}]+\}/)
        .map((s) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
        .join('[\\w]+');
      patterns.push(new RegExp(`^${re}$`));
    }
    // keys built from a prefix: t(`nav.${s.key}`) is covered above; `status.` etc. through tOr
  }
  const known = bases(dicts.en);
  t.same([...literal].filter((k) => !known.has(k)).sort(), [], 'every key the code uses exists');
  t.ok(literal.size > 250 && patterns.length > 10, 'the scan found the keys');
  const unused = [...known].filter((k) => !literal.has(k) && !patterns.some((re) => re.test(k))).sort();
  t.same(unused, [], 'every key in the files is used');
});
