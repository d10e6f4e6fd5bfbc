/**
 * Dark mode in real Chromium: on the login page and every page of the client (routes.tsx, with the
 * dialogs their header opens), in the dark and the light theme, the text of the body, main, cards,
 * inputs, buttons, table cells, badges, notes, code and muted text has a WCAG contrast ratio of at
 * least 4.5 over its effective background (relative luminance computed here); so do samples of what
 * the demo does not show by itself (toasts, every badge and note kind, highlighted code in a reply).
 * The account page's Light / Dark / System choice switches the theme, is remembered after a reload and set
 * before the app first draws, and System follows the emulated `prefers-color-scheme`. No console errors.
 */
import type { Page } from 'playwright-core';
import t from 'tap';
import { ensureBuilt, openBrowser } from './browser.ts';
import { concrete, eachDialog, login, routePaths, startDemo, visit } from './pages.ts';

ensureBuilt();

const MIN_RATIO = 4.5;
const demo = await startDemo('en');
const b = await openBrowser({ width: 1366, height: 850 });
const { page } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await demo.close();
});

interface Pair {
  what: string;
  ratio: number;
}

/**
 * The contrast of each visible element of interest in `scope`: its text colour (blended when
 * translucent) against the first opaque background up its ancestors (translucent ones blended in).
 * Disabled controls are left out (WCAG exempts inactive ones).
 */
async function contrasts(p: Page, scope: string): Promise<Pair[]> {
  return p.evaluate((scope) => {
    const SELECTORS = [
      'body',
      'main',
      '.card',
      'input:not([type="checkbox"]):not([type="radio"])',
      'select',
      'textarea',
      '.btn',
      'button',
      '.table td',
      '.table th',
      '.badge',
      '.note',
      'code',
      'pre',
      '.muted',
      '.hint',
      'a',
      '.toast',
      '.modal',
      '.msg-body',
      '.sidebar',
      '[class^="hljs-"]',
    ];
    type RGBA = [number, number, number, number];
    const parse = (c: string): RGBA => {
      const m = /^rgba?\(([^)]+)\)$/.exec(c) ?? /^color\(srgb ([^)]+)\)$/.exec(c);
      if (!m) return [0, 0, 0, 0];
      const parts = m[1]!
        .split(/[\s,/]+/)
        .filter(Boolean)
        .map(Number);
      const scale = c.startsWith('color(') ? 255 : 1;
      return [parts[0]! * scale, parts[1]! * scale, parts[2]! * scale, parts[3] ?? 1];
    };
    const over = (top: RGBA, under: RGBA): RGBA => {
      const a = top[3];
      return [0, 1, 2].map((i) => top[i]! * a + under[i]! * (1 - a)).concat(1) as RGBA;
    };
    const background = (el: Element | null): RGBA => {
      const layers: RGBA[] = [];
      for (let e = el; e; e = e.parentElement) {
        const c = parse(getComputedStyle(e).backgroundColor);
        if (c[3] > 0) layers.push(c);
        if (c[3] >= 1) break;
      }
      let result: RGBA = [255, 255, 255, 1];
      for (const layer of layers.reverse()) result = over(layer, result);
      return result;
    };
    const luminance = (c: RGBA) => {
      const [r, g, b] = [c[0], c[1], c[2]].map((v) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
    };
    const ratio = (a: RGBA, b: RGBA) => {
      const [x, y] = [luminance(a), luminance(b)].sort((m, n) => n - m);
      return (x! + 0.05) / (y! + 0.05);
    };
    const root = document.querySelector(scope);
    if (!root) return [];
    const out: { what: string; ratio: number }[] = [];
    for (const sel of SELECTORS) {
      const els = [...(root.matches(sel) ? [root] : []), ...root.querySelectorAll(sel)].slice(0, 40);
      for (const el of els) {
        if (!el.getClientRects().length || (el as HTMLInputElement).disabled) continue;
        const style = getComputedStyle(el);
        if (style.visibility === 'hidden' || Number(style.opacity) < 0.7) continue;
        const bg = background(el);
        const fg = over(parse(style.color), bg);
        const classes = typeof el.className === 'string' ? el.className.trim().split(/\s+/).filter(Boolean) : [];
        const name = [el.tagName.toLowerCase(), ...classes].join('.');
        out.push({ what: `${sel} (${name})`, ratio: Math.round(ratio(fg, bg) * 100) / 100 });
      }
    }
    return out;
  }, scope);
}

/** Elements the demo does not show by itself, added to main for a moment: toasts, badges, notes, highlighted code. */
async function addSamples(p: Page): Promise<void> {
  await p.evaluate(() => {
    const div = document.createElement('div');
    div.id = 'contrast-samples';
    const kinds = ['ok', 'warn', 'danger', 'info'];
    const hl = ['keyword', 'string', 'number', 'comment', 'title', 'meta', 'attr', 'built_in', 'variable'];
    const code = hl.map((h) => `<span class="hljs-${h}">x</span>`).join('');
    div.innerHTML = [
      ...kinds.map((k) => `<span class="badge badge-${k}">b</span><div class="note note-${k}">n</div>`),
      '<span class="badge">b</span>',
      '<button class="btn btn-primary">p</button><button class="btn btn-danger">d</button>',
      '<button class="btn btn-ghost">g</button><button class="btn">n</button>',
      '<div class="toast">t</div><div class="toast toast-danger">t</div>',
      '<div class="msg msg-user"><div class="msg-body">u</div></div>',
      `<div class="msg"><div class="msg-body md"><pre><code>${code}</code></pre></div></div>`,
      `<table class="table"><thead><tr><th>h</th></tr></thead><tbody><tr><td>c</td></tr></tbody></table>`,
    ].join('');
    document.querySelector('main')!.append(div);
  });
}

const removeSamples = (p: Page) => p.evaluate(() => document.getElementById('contrast-samples')?.remove());

const lowest: Record<string, Pair> = {};
function record(theme: string, where: string, pairs: Pair[], low: string[]) {
  for (const pair of pairs) {
    if (!lowest[theme] || pair.ratio < lowest[theme].ratio)
      lowest[theme] = { what: `${where} ${pair.what}`, ratio: pair.ratio };
    if (pair.ratio < MIN_RATIO) low.push(`${where} ${pair.what}: ${pair.ratio}`);
  }
}

const chooseTheme = async (choice: 'light' | 'dark' | 'system') => {
  await visit(page, '/account');
  await page.getByTestId(`theme-${choice}`).check();
};
const themeNow = () => page.evaluate(() => document.documentElement.getAttribute('data-theme'));
const bodyBackground = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);

t.test('the login page is readable in both themes', async (t) => {
  await page.goto(demo.svc.url);
  for (const theme of ['dark', 'light'] as const) {
    await page.evaluate((v) => localStorage.setItem('herald.theme', v), theme);
    await page.reload();
    await page.locator('input[name="email"]').waitFor();
    t.equal(await themeNow(), theme, `the remembered ${theme} theme is set at load`);
    const low: string[] = [];
    const pairs = await contrasts(page, 'body');
    record(theme, '/login', pairs, low);
    t.ok(pairs.length > 5, `${pairs.length} elements measured`);
    t.same(low, [], `every text on the login page has contrast ≥ ${MIN_RATIO} in ${theme}`);
  }
  await page.evaluate(() => localStorage.removeItem('herald.theme'));
});

const routes = routePaths();
for (const theme of ['dark', 'light'] as const) {
  t.test(`every page is readable in the ${theme} theme (the system says the opposite)`, async (t) => {
    await page.emulateMedia({ colorScheme: theme === 'dark' ? 'light' : 'dark' });
    if (!(await page.locator('#page-title').count())) await login(page, demo.svc.url);
    await chooseTheme(theme);
    t.equal(await themeNow(), theme, 'the choice sets the theme at once');
    const low: string[] = [];
    let pages = 0;
    let measured = 0;
    for (const route of routes) {
      const path = concrete(route, demo);
      if (!path) continue;
      await visit(page, path);
      const pairs = await contrasts(page, 'body');
      measured += pairs.length;
      record(theme, path, pairs, low);
      await eachDialog(page, async (name) => {
        record(theme, `${path} ${name}`, await contrasts(page, 'dialog[open]'), low);
      });
      pages++;
    }
    await addSamples(page);
    record(theme, 'samples', await contrasts(page, '#contrast-samples'), low);
    await removeSamples(page);
    t.ok(pages > 15, `${pages} pages, ${measured} elements measured`);
    t.same(low, [], `every text has contrast ≥ ${MIN_RATIO} in ${theme}`);
    t.comment(`lowest in ${theme}: ${lowest[theme]?.ratio} (${lowest[theme]?.what})`);
  });
}

t.test('the choice is remembered, and System follows the system', async (t) => {
  await page.emulateMedia({ colorScheme: 'light' });
  await chooseTheme('dark');
  // Notes the theme at the moment the app first draws into #app (before any page script runs).
  await page.addInitScript(() => {
    new MutationObserver((_, watcher) => {
      if (!document.getElementById('app')?.firstChild) return;
      (window as { themeAtRender?: string | null }).themeAtRender = document.documentElement.getAttribute('data-theme');
      watcher.disconnect();
    }).observe(document, { childList: true, subtree: true });
  });
  await page.reload();
  await page.locator('#page-title').waitFor();
  t.equal(await themeNow(), 'dark', 'dark after a reload');
  t.equal(
    await page.evaluate(() => (window as { themeAtRender?: string | null }).themeAtRender),
    'dark',
    'set before the first render (no light flash)',
  );
  t.equal(await bodyBackground(), 'rgb(15, 18, 22)', 'the dark background though the system is light');
  await visit(page, '/account');
  t.ok(await page.getByTestId('theme-dark').isChecked(), 'the account page shows the remembered choice');

  await chooseTheme('light');
  await page.emulateMedia({ colorScheme: 'dark' });
  t.equal(await bodyBackground(), 'rgb(245, 246, 248)', 'light though the system is dark');

  await chooseTheme('system');
  t.equal(await themeNow(), null, 'System leaves it to the stylesheet');
  t.equal(await bodyBackground(), 'rgb(15, 18, 22)', 'System: dark when the system is dark');
  await page.emulateMedia({ colorScheme: 'light' });
  t.equal(await bodyBackground(), 'rgb(245, 246, 248)', 'System: light when the system is light');
  await page.reload();
  await page.locator('#page-title').waitFor();
  t.equal(
    await page.evaluate(() => localStorage.getItem('herald.theme')),
    null,
    'System is the default, nothing stored',
  );
  await page.emulateMedia({ colorScheme: 'dark' });
  t.equal(await bodyBackground(), 'rgb(15, 18, 22)', 'System after a reload: dark follows the system');
  t.same(b.problems, [], 'no console errors');
});
