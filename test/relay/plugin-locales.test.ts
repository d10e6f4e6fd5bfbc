/**
 * Localized plugins: every first-party plugin ships complete English and Russian locale files
 * (checked against its schemas and event types, so a new field cannot slip through), and
 * `GET /api/plugins` answers in the caller's language.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { localeFields, missingLocaleStrings, type PluginLocaleStrings, type PluginManifest } from '@herald/plugin-api';
import t from 'tap';
import { FIRST_PARTY_PLUGINS } from '../../core/src/config/config.ts';
import { startService } from '../helpers/service.ts';

const require = createRequire(import.meta.url);
const CYRILLIC = /[а-яё]/i;

interface FirstParty {
  pkg: string;
  dir: string;
  manifest: PluginManifest;
  files: Record<'en' | 'ru', PluginLocaleStrings>;
}

const plugins: FirstParty[] = [];
for (const pkg of FIRST_PARTY_PLUGINS) {
  const dir = path.dirname(require.resolve(`${pkg}/package.json`));
  const manifest = ((await import(pkg)) as { default: { manifest: PluginManifest } }).default.manifest;
  const read = (l: string) =>
    JSON.parse(fs.readFileSync(path.join(dir, 'locales', `${l}.json`), 'utf8')) as PluginLocaleStrings;
  plugins.push({ pkg, dir, manifest, files: { en: read('en'), ru: read('ru') } });
}

t.test('every first-party plugin has every string in English and Russian', async (t) => {
  t.equal(plugins.length, FIRST_PARTY_PLUGINS.length);
  t.ok(plugins.length >= 22, `${plugins.length} first-party plugins`);
  for (const p of plugins) {
    t.same(p.manifest.locales?.en, p.files.en, `${p.pkg}: the manifest carries locales/en.json`);
    t.same(p.manifest.locales?.ru, p.files.ru, `${p.pkg}: the manifest carries locales/ru.json`);
    t.same(missingLocaleStrings(p.manifest, 'en'), [], `${p.pkg}: en.json covers every field, option and event type`);
    t.same(missingLocaleStrings(p.manifest, 'ru'), [], `${p.pkg}: ru.json has every string`);
    const ru = p.files.ru;
    t.match(ru.description, CYRILLIC, `${p.pkg}: the description is Russian`);
    for (const [type, e] of Object.entries(ru.events ?? {}))
      t.match(e.description, CYRILLIC, `${p.pkg}: event ${type} is described in Russian`);
    for (const [field, f] of Object.entries({ ...ru.config, ...ru.tracker }))
      if (f.hint) t.match(f.hint, CYRILLIC, `${p.pkg}: the hint of ${field} is Russian`);
    const pkgJson = JSON.parse(fs.readFileSync(path.join(p.dir, 'package.json'), 'utf8')) as { files?: string[] };
    if (pkgJson.files)
      t.ok(
        pkgJson.files.some((f) => f.replace(/^\.\//, '').replace(/\/$/, '') === 'locales'),
        `${p.pkg}: the package ships locales/`,
      );
  }
});

const PLUGINS = FIRST_PARTY_PLUGINS.join(',');
const key = (m: PluginManifest) => `${m.kind}:${m.id}`;

/**
 * For each plugin (`<kind>:<id>`: a provider and a target may share an id): its display name, field titles and hints,
 * option labels and event descriptions as the API returns them.
 */
function strings(body: { plugins: any[] }) {
  return Object.fromEntries(
    body.plugins.map((p) => {
      const fields: Record<string, unknown> = {};
      for (const [section, schema] of [
        ['config', p.config_schema],
        ['tracker', p.tracker_schema],
      ] as const) {
        for (const f of localeFields(schema)) {
          const s = f.schema as { title?: string; description?: string; 'x-option-labels'?: Record<string, string> };
          fields[`${section}.${f.path}`] = { label: s.title, hint: s.description, options: s['x-option-labels'] };
        }
      }
      const events = Object.fromEntries(Object.entries(p.events).map(([k, e]: [string, any]) => [k, e.description]));
      return [`${p.kind}:${p.id}`, { name: p.display_name, description: p.description, fields, events }];
    }),
  );
}

/** The same, read from a plugin's locale file (what the API must return for that language). */
function expected(m: PluginManifest, l: PluginLocaleStrings) {
  const fields: Record<string, unknown> = {};
  for (const section of ['config', 'tracker'] as const) {
    for (const f of localeFields(section === 'config' ? m.configSchema : m.trackerSchema)) {
      const text = l[section]?.[f.path];
      fields[`${section}.${f.path}`] = {
        label: text?.label,
        hint: text?.hint,
        options: f.options ? text?.options : undefined,
      };
    }
  }
  const events = Object.fromEntries(Object.keys(m.events ?? {}).map((k) => [k, l.events?.[k]?.description]));
  return { name: l.displayName, description: l.description, fields, events };
}

t.test("GET /api/plugins answers in the caller's language", async (t) => {
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  t.teardown(() => s.stop());
  const russian = await s.user();
  t.equal(
    (await s.request('PATCH', '/api/v1/users/me', { token: russian.token, body: { locale: 'ru' } })).body.locale,
    'ru',
  );

  const ru = await s.request('GET', '/api/plugins', { token: russian.token });
  t.equal(ru.status, 200);
  t.equal(ru.body.locale, 'ru', 'a Russian user gets Russian');
  const got = strings(ru.body);
  t.same(Object.keys(got).sort(), plugins.map((p) => key(p.manifest)).sort(), 'every first-party plugin is listed');
  for (const p of plugins) {
    t.same(
      got[key(p.manifest)],
      expected(p.manifest, p.files.ru),
      `${key(p.manifest)}: Russian name, description, labels, hints, options and event descriptions`,
    );
  }
  t.equal(got['provider:immich'].name, 'Immich (фотобиблиотека)');
  t.equal((got['provider:immich'].fields as any)['tracker.album_ids'].label, 'Альбомы');
  t.equal((got['target:email'].fields as any)['config.security'].options.none, 'Без шифрования');
  t.equal(got['provider:nut'].events.ups_online, 'Сетевое питание восстановлено.');
  const immich = ru.body.plugins.find((p: any) => p.id === 'immich');
  t.equal(immich.config_schema.properties.api_key['x-secret'], true, "the schema is otherwise the plugin's own");
  t.equal(immich.events.album_assets_changed.severity, 'info');

  const asked = await s.request('GET', '/api/plugins?locale=en', { token: russian.token });
  t.equal(asked.body.locale, 'en', "?locale= (the web client's own language) overrides the account");
  for (const p of plugins)
    t.same(
      strings(asked.body)[key(p.manifest)],
      expected(p.manifest, p.files.en),
      `${key(p.manifest)}: English with ?locale=en`,
    );

  const header = await s.request('GET', '/api/plugins', {
    token: s.admin.token,
    headers: { 'accept-language': 'ru-RU,ru;q=0.9' },
  });
  t.equal(header.body.locale, 'en', "the user's own language (English) beats Accept-Language");
  t.equal(
    strings(header.body)['target:telegram'].description,
    plugins.find((p) => p.manifest.id === 'telegram')!.files.en.description,
  );

  // A language Herald does not ship (set before a locale was dropped, say): Accept-Language decides.
  await s.service.core.db.run('UPDATE users SET locale = ? WHERE id = ?', ['de', russian.id]);
  const fallback = await s.request('GET', '/api/plugins', {
    token: russian.token,
    headers: { 'accept-language': 'de-DE, ru;q=0.8, en;q=0.5' },
  });
  t.equal(fallback.body.locale, 'ru', "Accept-Language when the user's language is not one Herald has");
  t.equal(strings(fallback.body)['provider:planka'].name, 'Planka (канбан)');
  const none = await s.request('GET', '/api/plugins', { token: russian.token, headers: { 'accept-language': 'fr' } });
  t.equal(none.body.locale, 'en', 'else English');
  t.equal(strings(none.body)['provider:planka'].name, 'Planka (kanban)');
  t.equal(
    (await s.request('GET', '/api/plugins?locale=xx', { token: russian.token })).status,
    422,
    'an unknown ?locale= is refused',
  );
});
