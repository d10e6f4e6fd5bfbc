/**
 * Build of the web client: preact through oxc's automatic JSX runtime (no framework plugin),
 * one small CSS file, output to core/web/dist which the core serves at `/`. Each language's strings
 * come in two chunks (see src/locales/first-visit.ts): what a first visit shows, and the rest.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { firstVisit } from './src/locales/first-visit.ts';

const root = fileURLToPath(new URL('.', import.meta.url));
const LOCALES = fileURLToPath(new URL('../../locales', import.meta.url));
const STRINGS = 'virtual:herald-strings/';

type Tree = { [k: string]: string | Tree };
function flatten(tree: Tree, prefix: string, out: Record<string, string>): Record<string, string> {
  for (const [k, v] of Object.entries(tree)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'string') out[key] = v;
    else flatten(v, key, out);
  }
  return out;
}

/**
 * `virtual:herald-strings/<lang>/first` and `…/more`: locales/<lang>/web.json and then its fragments
 * locales/<lang>/web/*.json in name order, flattened to dotted keys (a later file's key wins, as when they were
 * merged in the client), split by `firstVisit`.
 */
function strings(): Plugin {
  return {
    name: 'herald-strings',
    resolveId: (id) => (id.startsWith(STRINGS) ? `\0${id}` : undefined),
    load(id) {
      if (!id.startsWith(`\0${STRINGS}`)) return;
      const [lang, part] = id.slice(STRINGS.length + 1).split('/');
      if (!lang || !/^[a-z]{2}$/.test(lang) || (part !== 'first' && part !== 'more')) return;
      const dir = path.join(LOCALES, lang, 'web');
      const files = [
        path.join(LOCALES, lang, 'web.json'),
        ...fs
          .readdirSync(dir)
          .filter((f) => f.endsWith('.json'))
          .sort()
          .map((f) => path.join(dir, f)),
      ];
      const all: Record<string, string> = {};
      for (const f of files) {
        this.addWatchFile(f);
        flatten(JSON.parse(fs.readFileSync(f, 'utf8')) as Tree, '', all);
      }
      const chosen = Object.entries(all).filter(([k]) => firstVisit(k) === (part === 'first'));
      return `export default ${JSON.stringify(Object.fromEntries(chosen))};`;
    },
  };
}

export default defineConfig({
  root,
  base: '/',
  publicDir: false,
  plugins: [strings()],
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // The CSP forbids inline scripts and data: fonts are not needed; keep every asset a file.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8080' } },
});
