/**
 * The built client stays small: what a first visit downloads (entry script, its preloads, one
 * language) and all the JavaScript together, gzipped. Builds first when core/web/dist is missing.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import t from 'tap';
import { DIST, ensureBuilt } from './browser.ts';

/**
 * Budgets in gzipped kilobytes. Every page but the overview loads on its first visit (the chat chunk,
 * with the markdown renderer and sanitizer, is the largest); a language chunk carries all its strings.
 * The total grew with the operations, accounts, scheduled-actions, templates and chat-control pages
 * (72 KB before them): the budget keeps about 10 % of headroom over what they weigh. The template
 * editor (its dialog and its strings in both languages, a few KB) took the total past 120 KB: now 124 KB.
 * The reach round's browser notifications (the account page's section and its strings) and the target
 * form's Apprise URL field took it to 124.5 KB; the assistant's tools (confirmation cards, Ask the
 * assistant) come next: 132 KB. Russian without codes (names for every event type, failure and
 * rejection texts in words, time zones named in the language) took it from 130.6 to 135.8 KB: 137 KB. Live updates
 * (the EventSource client, its indicator and due times, their strings in both languages) took it to 138.2 KB: 140 KB.
 */
const FIRST_LOAD_KB = 40;
const ALL_JS_KB = 140;
const CSS_KB = 8;
/** The syntax highlighter (highlight.js and its languages), loaded only when a reply has a code block. */
const HIGHLIGHT_KB = 30;

ensureBuilt();
const gz = (file: string) => zlib.gzipSync(fs.readFileSync(path.join(DIST, file)), { level: 9 }).length / 1024;
const html = fs.readFileSync(path.join(DIST, 'index.html'), 'utf8');
const assets = fs.readdirSync(path.join(DIST, 'assets')).map((f) => `assets/${f}`);
const js = assets.filter((f) => f.endsWith('.js'));

t.test('the page loads no inline script and nothing from elsewhere', async (t) => {
  t.notMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline scripts (the CSP forbids them)');
  t.notMatch(html, /(src|href)="(https?:)?\/\//, 'no third-party hosts');
  t.match(html, /<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js">/, 'one module entry');
});

t.test('the first visit is small', async (t) => {
  const entry = /src="\/(assets\/index-[\w-]+\.js)"/.exec(html)![1];
  const preloads = [...html.matchAll(/rel="modulepreload"[^>]*href="\/([^"]+)"/g)].map((m) => m[1]);
  // Each language is its own chunk; a visit loads one (the larger counts).
  const languages = js.filter((f) => /\/web-[\w-]+\.js$/.test(f));
  t.equal(languages.length, 2, 'one chunk per language');
  const first = [entry, ...preloads].reduce((n, f) => n + gz(f), 0) + Math.max(...languages.map(gz));
  const highlighter = js.find((f) => /\/highlight-[\w-]+\.js$/.test(f));
  const all = js.filter((f) => f !== highlighter).reduce((n, f) => n + gz(f), 0);
  const css = assets.filter((f) => f.endsWith('.css')).reduce((n, f) => n + gz(f), 0);
  t.comment(
    `first visit ${first.toFixed(1)} KB, all JavaScript ${all.toFixed(1)} KB, CSS ${css.toFixed(1)} KB (gzipped)`,
  );
  t.ok(first <= FIRST_LOAD_KB, `first visit ${first.toFixed(1)} KB ≤ ${FIRST_LOAD_KB} KB`);
  t.ok(all <= ALL_JS_KB, `all JavaScript ${all.toFixed(1)} KB ≤ ${ALL_JS_KB} KB`);
  t.ok(css <= CSS_KB, `CSS ${css.toFixed(1)} KB ≤ ${CSS_KB} KB`);
  const chats = js.find((f) => /\/chats-[\w-]+\.js$/.test(f));
  t.ok(
    chats && ![entry, ...preloads].includes(chats),
    'the chat code (markdown, sanitizer) is not in the first download',
  );
  t.ok(
    highlighter && ![entry, ...preloads].includes(highlighter),
    'the highlighter is a chunk of its own, not in the first download',
  );
  t.ok(gz(highlighter!) <= HIGHLIGHT_KB, `highlighter ${gz(highlighter!).toFixed(1)} KB ≤ ${HIGHLIGHT_KB} KB`);
  t.notMatch(
    fs.readFileSync(path.join(DIST, chats!), 'utf8'),
    /registerLanguage/,
    'the chat chunk imports the highlighter dynamically, not its code',
  );
});
