/** Picking the caller's language and resolving a plugin's words with English as the per-string fallback. */

import { missingLocaleStrings, type PluginManifest, Type } from '@herald/plugin-api';
import t from 'tap';
import { acceptedLanguages, localizeManifest, pickLocale } from './locales.ts';

const manifest = (): PluginManifest => ({
  id: 'sample',
  kind: 'provider',
  apiVersion: 1,
  displayName: 'Sample (manifest)',
  description: 'From the manifest',
  configSchema: Type.Object({
    base_url: Type.String({ description: 'Schema hint' }),
    mode: Type.Union([Type.Literal('fast'), Type.Literal('safe')]),
    nested: Type.Object({
      depth: Type.Integer(),
      untranslated: Type.String({ description: 'Only the schema has it' }),
    }),
    bare: Type.String(),
  }),
  trackerSchema: Type.Object({ album_ids: Type.Array(Type.String()) }),
  events: {
    a_happened: { payload: Type.Object({}), quietHours: 'defer', severity: 'info', description: 'A (manifest)' },
    b_happened: { payload: Type.Object({}), quietHours: 'send', severity: 'warning' },
    c_happened: { payload: Type.Object({}), quietHours: 'drop', severity: 'info', description: 'C (manifest)' },
  },
  locales: {
    en: {
      displayName: 'Sample',
      description: 'Samples things',
      config: {
        base_url: { label: 'Server address', hint: 'Where the server is' },
        mode: { label: 'Mode', options: { fast: 'Fast', safe: 'Safe' } },
        nested: { label: 'Nested' },
        'nested.depth': { label: 'Depth', hint: 'How deep' },
      },
      tracker: { album_ids: { label: 'Albums' } },
      events: { a_happened: { description: 'A happened' }, b_happened: { description: 'B happened' } },
    },
    ru: {
      displayName: 'Образец',
      config: {
        base_url: { label: 'Адрес сервера' },
        mode: { label: 'Режим', options: { fast: 'Быстро' } },
        'nested.depth': { hint: 'Насколько глубоко' },
      },
      tracker: { album_ids: { label: 'Альбомы' } },
      events: { a_happened: { description: 'Случилось A' } },
    },
  },
});

t.test('the language: ?locale=, then the user, then Accept-Language, then English', async (t) => {
  t.equal(pickLocale({ query: 'en', user: 'ru', acceptLanguage: 'ru' }), 'en', 'an explicit ?locale= wins');
  t.equal(pickLocale({ user: 'ru', acceptLanguage: 'en' }), 'ru', "the user's language beats the header");
  t.equal(pickLocale({ user: 'en', acceptLanguage: 'ru' }), 'en');
  t.equal(
    pickLocale({ user: 'de', acceptLanguage: 'de-DE, ru-RU;q=0.8, en;q=0.5' }),
    'ru',
    'a language Herald does not ship is skipped; ru-RU counts as ru',
  );
  t.equal(
    pickLocale({ query: 'xx', user: null, acceptLanguage: 'en;q=0.2, ru;q=0.9' }),
    'ru',
    'the header is ordered by q',
  );
  t.equal(
    pickLocale({ user: undefined, acceptLanguage: 'ru;q=0, fr' }),
    'en',
    'q=0 means not wanted; nothing known: English',
  );
  t.equal(pickLocale({}), 'en');
  t.same(acceptedLanguages(' fr-CH, fr;q=0.9, en;q=0.8, *;q=0.5'), ['fr-ch', 'fr', 'en', '*']);
  t.same(acceptedLanguages(undefined), []);
});

t.test('a missing translation falls back to English string by string, never to a key', async (t) => {
  const m = manifest();
  const ru = localizeManifest(m, 'ru');
  t.equal(ru.display_name, 'Образец');
  t.equal(ru.description, 'Samples things', 'description missing in ru: the English file');
  const cfg = ru.config_schema as any;
  t.equal(cfg.properties.base_url.title, 'Адрес сервера');
  t.equal(cfg.properties.base_url.description, 'Where the server is', 'hint missing in ru: English hint');
  t.same(
    cfg.properties.mode['x-option-labels'],
    { fast: 'Быстро', safe: 'Safe' },
    'option labels fall back one by one',
  );
  t.equal(cfg.properties.nested.title, 'Nested', 'label missing in ru: English label');
  t.equal(cfg.properties.nested.properties.depth.title, 'Depth');
  t.equal(cfg.properties.nested.properties.depth.description, 'Насколько глубоко');
  t.equal(
    cfg.properties.nested.properties.untranslated.description,
    'Only the schema has it',
    "in no file: the schema's own description",
  );
  t.notOk(
    'title' in cfg.properties.bare,
    'nothing anywhere: no title (the form humanizes the field name), never a key',
  );
  t.equal((ru.tracker_schema as any).properties.album_ids.title, 'Альбомы');
  t.same(ru.events, { a_happened: 'Случилось A', b_happened: 'B happened', c_happened: 'C (manifest)' });

  const en = localizeManifest(m, 'en');
  t.equal(en.display_name, 'Sample');
  t.equal((en.config_schema as any).properties.base_url.title, 'Server address');
  t.equal((m.configSchema as any).properties.base_url.title, undefined, "the manifest's schema is not modified");
  t.equal(localizeManifest(m, 'ru'), ru, 'resolved once per manifest and language');

  const bare = localizeManifest({ ...m, locales: undefined }, 'ru');
  t.equal(bare.display_name, 'Sample (manifest)', 'a plugin without locale files shows its manifest strings');
  t.equal(bare.events.b_happened, null);
});

t.test('missingLocaleStrings lists every string a language lacks, and keys that match nothing', async (t) => {
  const m = manifest();
  t.same(missingLocaleStrings(m, 'en').sort(), [
    'config.bare.label',
    'config.nested.untranslated.hint',
    'config.nested.untranslated.label',
    'events.c_happened.description',
  ]);
  t.same(missingLocaleStrings(m, 'ru').sort(), [
    'config.bare.label',
    'config.base_url.hint',
    'config.mode.options.safe',
    'config.nested.depth.label',
    'config.nested.label',
    'config.nested.untranslated.hint',
    'config.nested.untranslated.label',
    'description',
    'events.b_happened.description',
    'events.c_happened.description',
  ]);
  const stale = manifest();
  stale.locales!.en.config!.old_field = { label: 'Old' };
  stale.locales!.en.config!.mode.options!.turbo = 'Turbo';
  stale.locales!.en.events!.gone = { description: 'Gone' };
  for (const k of ['unknown: config.mode.options.turbo', 'unknown: config.old_field', 'unknown: events.gone'])
    t.ok(missingLocaleStrings(stale, 'en').includes(k), k);
  t.same(
    missingLocaleStrings({ ...m, locales: undefined }, 'ru').slice(0, 2),
    ['displayName', 'description'],
    'no files at all: everything missing',
  );
});
