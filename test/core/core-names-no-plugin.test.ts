/**
 * The core carries no plugin specifics: no first-party kind id, event type or display name is
 * spelled in core/src, except the list of first-party default packages in config.ts and the Apprise
 * URL importer (relay/apprise-url.ts and its test), which is by nature a table from Apprise's schemes
 * to first-party kinds, and the browser-push store (relay/push/), which keeps the VAPID key and the
 * browsers' subscriptions the `webpush` kind sends to (its tables are named after it). `email`, `webhook`, `http` and
 * `signal` are also ordinary words there (a user's e-mail address, a bot's webhook mode, the HTTP server, an abort
 * signal), so for those only a
 * comparison or assignment of a kind counts.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { FIRST_PARTY_PLUGINS } from '../../core/src/config/config.ts';
import { loadPlugins } from '../../core/src/plugins/loader.ts';

const root = path.resolve(import.meta.dirname, '../../core/src');
const ALLOWED = new Set(
  ['config/config.ts', 'relay/apprise-url.ts', 'relay/apprise-url.test.ts'].map((f) => path.join(root, f)),
);
const ALLOWED_DIRS = [path.join(root, 'relay/push') + path.sep];
const COMMON_WORDS = new Set(['email', 'webhook', 'http', 'signal']);
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

t.test('core/src names no first-party kind, event type or display name', async (t) => {
  const plugins = await loadPlugins([...FIRST_PARTY_PLUGINS]);
  const names = new Map<string, RegExp>();
  for (const p of plugins) {
    const m = p.def.manifest;
    names.set(
      `kind ${p.id}`,
      COMMON_WORDS.has(p.id)
        ? new RegExp(`kind\\s*(?:===|!==|==|!=|:|=|\\?\\?)\\s*['"\`]${p.id}['"\`]`)
        : new RegExp(`['"\`]${escape(p.id)}['"\`]|\\b${escape(p.id)}_`),
    );
    for (const type of Object.keys(m.events ?? {}))
      names.set(`event type ${type}`, new RegExp(`['"\`]${escape(type)}['"\`]`));
    names.set(`display name ${m.displayName}`, new RegExp(`['"\`]${escape(m.displayName)}['"\`]`));
  }
  t.ok(names.size > 40, `checked ${names.size} names`);
  const found: string[] = [];
  let files = 0;
  for (const f of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!f.isFile() || !/\.(ts|mjs|js)$/.test(f.name)) continue;
    const file = path.join(f.parentPath, f.name);
    if (ALLOWED.has(file) || ALLOWED_DIRS.some((d) => file.startsWith(d))) continue;
    files++;
    const text = fs.readFileSync(file, 'utf8');
    for (const [what, re] of names) if (re.test(text)) found.push(`${path.relative(root, file)}: ${what}`);
  }
  t.ok(files > 100, `scanned ${files} files`);
  t.same(found, [], 'no plugin names in the core');
});
