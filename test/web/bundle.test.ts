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
 * The overview's charts (uPlot, 23.3 KB in a chunk of its own that only the overview loads, when there is something to
 * draw) and its first-run checklist (1.3 KB), with their strings, took it to 166.4 KB; each language's strings in two
 * chunks (what a first visit shows, and the rest) cost 1.6 KB more: 168.0 KB: 172 KB.
 * The first visit was 39.8 KB, 22.4 of it the Russian strings; with only the strings a first visit shows (the
 * Russian 10.2 KB) it is 29.4 KB: 35 KB.
 */
const FIRST_LOAD_KB = 35;
const ALL_JS_KB = 172;
/**
 * The stylesheet a first visit loads; all CSS together adds the stylesheets of the chunks loaded later (uPlot's and
 * the charts' 0.8 KB, the checklist's 0.4 KB, the event log's 0.3 KB): 8.1 KB with them: 9 KB.
 */
const CSS_KB = 8;
const ALL_CSS_KB = 9;
/** uPlot and the overview's charts, loaded by the overview only. */
const CHARTS_KB = 26;
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
  // Each language's first-visit strings are a chunk of their own; a visit loads one (the larger counts). The rest of
  // a language's strings come with the first page that is not the overview, not on a first visit.
  const languages = js.filter((f) => /\/web-[\w-]+\.js$/.test(f));
  t.equal(languages.length, 2, 'one first-visit chunk per language');
  const rest = js.filter((f) => /\/more-(en|ru)-[\w-]+\.js$/.test(f));
  t.equal(rest.length, 2, 'one chunk per language for the other pages');
  const first = [entry, ...preloads].reduce((n, f) => n + gz(f), 0) + Math.max(...languages.map(gz));
  const highlighter = js.find((f) => /\/highlight-[\w-]+\.js$/.test(f));
  const all = js.filter((f) => f !== highlighter).reduce((n, f) => n + gz(f), 0);
  const css = assets.filter((f) => f.endsWith('.css')).reduce((n, f) => n + gz(f), 0);
  const sheets = [...html.matchAll(/rel="stylesheet"[^>]*href="\/([^"]+)"/g)].map((m) => m[1]!);
  t.equal(sheets.length, 1, 'one stylesheet on a first visit');
  const firstCss = sheets.reduce((n, f) => n + gz(f), 0);
  t.comment(
    `first visit ${first.toFixed(1)} KB, all JavaScript ${all.toFixed(1)} KB, CSS ${firstCss.toFixed(1)} KB first, ` +
      `${css.toFixed(1)} KB in all (gzipped)`,
  );
  t.ok(first <= FIRST_LOAD_KB, `first visit ${first.toFixed(1)} KB ≤ ${FIRST_LOAD_KB} KB`);
  t.ok(all <= ALL_JS_KB, `all JavaScript ${all.toFixed(1)} KB ≤ ${ALL_JS_KB} KB`);
  t.ok(firstCss <= CSS_KB, `first-visit CSS ${firstCss.toFixed(1)} KB ≤ ${CSS_KB} KB`);
  t.ok(css <= ALL_CSS_KB, `all CSS ${css.toFixed(1)} KB ≤ ${ALL_CSS_KB} KB`);
  for (const f of rest) t.notOk([entry, ...preloads].includes(f), `${f} is not in the first download`);
  const charts = js.find((f) => /\/charts-[\w-]+\.js$/.test(f));
  t.ok(charts && ![entry, ...preloads].includes(charts), 'uPlot and the charts are not in the first download');
  t.ok(gz(charts!) <= CHARTS_KB, `charts ${gz(charts!).toFixed(1)} KB ≤ ${CHARTS_KB} KB`);
  t.notMatch(fs.readFileSync(path.join(DIST, entry), 'utf8'), /uPlot|u-legend/, 'the entry has no charting code');
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
