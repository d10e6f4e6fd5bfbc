/**
 * Walks every page of the web client: a service with demo data (setup, a provider, target,
 * tracker, event, chat with a model reply, memory entry, backup), the route list read from
 * core/web/src/routes.tsx (so new pages are picked up), and checks of what a page shows — every
 * visible string comes from the current language's locale files, and no control sits beyond
 * the right edge of a phone screen. Shared by test/web/walk.test.ts and scripts/screenshots.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page, Request } from 'playwright-core';
import { FIRST_PARTY_PLUGINS } from '../../core/src/config/config.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai.ts';
import { startService, startSink, type TestService } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';
import { ROOT } from './sources.ts';

export type Lang = 'en' | 'ru';
export const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };

export interface Demo {
  svc: TestService;
  ai: FakeOpenAI;
  token: string;
  chatId: string;
  /** Strings the demo put in as user data (names, titles, contents): shown as they are. */
  data: string[];
  /** Identifiers a page may show as code: plugin ids, event types, config field names. */
  codes: string[];
  close(): Promise<void>;
}

/**
 * A service with every first-party plugin, the fake model, and some data in each area. The
 * administrator's saved language is `lang` (the walk logs in on a fresh browser and expects it).
 */
export async function startDemo(lang: Lang, env: Record<string, string> = {}): Promise<Demo> {
  const ai = await startFakeOpenAI({ apiKey: 'test-key' });
  const sink = await startSink();
  const svc = await startService(
    {
      AI_BASE_URL: ai.baseUrl,
      AI_API_KEY: 'test-key',
      SERVICE_LOG_LEVEL: 'WARNING',
      SERVICE_SUPERVISED: 'false',
      SERVICE_PLUGINS: FIRST_PARTY_PLUGINS.join(','),
      ...env,
    },
    { setup: false },
  );
  const call = async (method: string, p: string, body?: unknown, expect = [200, 201, 202, 204]) => {
    const r = await svc.request(method, p, { token, body });
    if (!expect.includes(r.status)) throw new Error(`${method} ${p}: ${r.status} ${r.text}`);
    return r.body;
  };
  let token = '';
  const setup = await svc.request('POST', '/api/setup', { body: { ...ADMIN, locale: lang } });
  if (setup.status !== 201) throw new Error(`setup: ${setup.status} ${setup.text}`);
  token = setup.body.access_token;

  const data = [
    ADMIN.email,
    ADMIN.email[0].toUpperCase(),
    'Hello',
    'Build server',
    'Deploy finished',
    'Team chat',
    'Nightly builds',
    'Release notes',
    'Prefers short answers',
    'Echo: Hello',
  ];
  const provider = await call('POST', '/api/providers', {
    kind: 'webhook',
    name: 'Build server',
    config: { mapping: { title: 'title', body: 'body' }, secret: '0123456789abcdef' },
    auth_mode: 'bearer',
  });
  const target = await call('POST', '/api/targets', {
    kind: 'chat_webhook',
    name: 'Team chat',
    locale: lang,
    config: { format: 'slack', url: `${sink.url}/slack` },
  });
  await call('POST', '/api/trackers', {
    provider_id: provider.id,
    name: 'Nightly builds',
    target_ids: [target.id],
  }).catch(() => call('POST', '/api/trackers', { provider_id: provider.id, name: 'Nightly builds' }));
  if (provider.webhook_url) {
    const url = new URL(provider.webhook_url);
    const r = await svc.request('POST', url.pathname, {
      headers: { authorization: 'Bearer 0123456789abcdef' },
      body: { title: 'Deploy finished', body: 'Release notes' },
    });
    if (r.status !== 202) throw new Error(`webhook: ${r.status} ${r.text}`);
  }
  const chat = await call('POST', '/api/v1/chats', { title: 'Release notes' });
  const sent = await svc.request('POST', `/api/v1/chats/${chat.id}/messages`, { token, body: { content: 'Hello' } });
  if (sent.status !== 200 || !sent.text.includes('event: done'))
    throw new Error(`chat: ${sent.status} ${sent.text.slice(0, 300)}`);
  await call('POST', '/api/v1/memory', { content: 'Prefers short answers' });
  await call('POST', '/api/backup/files');

  const plugins = (await call('GET', '/api/plugins')).plugins as { id: string; events: Record<string, unknown> }[];
  const codes = plugins.flatMap((p) => [p.id, ...Object.keys(p.events ?? {})]);
  return {
    svc,
    ai,
    token,
    chatId: chat.id,
    data,
    codes,
    async close() {
      await svc.stop();
      await sink.close();
      await ai.close();
    },
  };
}

/** Every route path of the client, in nav order, read from routes.tsx. */
export function routePaths(): string[] {
  const src = fs.readFileSync(path.join(ROOT, 'core/web/src/routes.tsx'), 'utf8');
  const list = src.slice(src.indexOf('export const ROUTES'));
  return [...list.matchAll(/\bpath:\s*'([^']+)'/g)].map((m) => m[1]);
}

/** A route with its parameters filled from the demo, or null when the walk cannot fill one. */
export function concrete(route: string, demo: Demo): string | null {
  const filled = route.replace(/^\/chats\/:id$/, `/chats/${demo.chatId}`);
  return filled.includes(':') ? null : filled;
}

/** A file name for a route: `/` → `overview`, `/admin/users` → `admin-users`, `/chats/<id>` → `chats-id`. */
export const routeName = (route: string): string =>
  route === '/' ? 'overview' : route.slice(1).replace(/:/g, '').replace(/\//g, '-');

type Tree = { [k: string]: unknown };
function leaves(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (v && typeof v === 'object') for (const x of Object.values(v as Tree)) leaves(x, out);
  return out;
}

/** Every string of a language: the client's locale files and each plugin's locale file. */
export function localeStrings(lang: Lang): string[] {
  const files = [path.join(ROOT, 'locales', lang, 'web.json')];
  const dir = path.join(ROOT, 'locales', lang, 'web');
  if (fs.existsSync(dir)) for (const f of fs.readdirSync(dir)) if (f.endsWith('.json')) files.push(path.join(dir, f));
  for (const p of fs.readdirSync(path.join(ROOT, 'plugins'))) {
    const f = path.join(ROOT, 'plugins', p, 'locales', `${lang}.json`);
    if (fs.existsSync(f)) files.push(f);
  }
  return files.flatMap((f) => leaves(JSON.parse(fs.readFileSync(f, 'utf8'))));
}

/** The client's own strings by key, for finding buttons by their label in either language. */
export function localeKeys(lang: Lang): Record<string, string> {
  const out: Record<string, string> = {};
  const flat = (v: unknown, prefix: string) => {
    if (typeof v === 'string') out[prefix] = v;
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) flat(x, prefix ? `${prefix}.${k}` : k);
  };
  flat(JSON.parse(fs.readFileSync(path.join(ROOT, 'locales', lang, 'web.json'), 'utf8')), '');
  const dir = path.join(ROOT, 'locales', lang, 'web');
  if (fs.existsSync(dir))
    for (const f of fs.readdirSync(dir))
      if (f.endsWith('.json')) flat(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')), '');
  return out;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Punctuation, symbols and spaces at either end do not count (": ", "(", "…", " · "). */
const strip = (s: string) => s.replace(/\s+/g, ' ').replace(/^[\s\p{P}\p{S}]+|[\s\p{P}\p{S}]+$/gu, '');
const shape = (s: string) => strip(s).replace(/\d+/g, '#');

/** Dates, times, relative times, sizes and numbers as Intl writes them in `lang`, digits as #. */
function intlShapes(lang: Lang): Set<string> {
  const tag = lang === 'ru' ? 'ru-RU' : 'en-GB';
  const out = new Set<string>();
  const fmts = [
    new Intl.DateTimeFormat(tag, { dateStyle: 'medium', timeStyle: 'short' }),
    new Intl.DateTimeFormat(tag, { dateStyle: 'medium' }),
    new Intl.DateTimeFormat(tag, { timeStyle: 'short' }),
    new Intl.DateTimeFormat(tag, { dateStyle: 'long' }),
    new Intl.DateTimeFormat(tag, { dateStyle: 'full' }),
    new Intl.DateTimeFormat(tag, { weekday: 'short' }),
    new Intl.DateTimeFormat(tag, { weekday: 'long' }),
    new Intl.DateTimeFormat(tag, { month: 'short', day: 'numeric' }),
    new Intl.DateTimeFormat(tag, { dateStyle: 'short', timeStyle: 'short' }),
  ];
  for (let m = 0; m < 12; m++)
    for (const d of [1, 15])
      for (const f of fmts) out.add(shape(f.format(new Date(Date.UTC(2026, m, d + (m % 7), 14, 5)))));
  const rtf = new Intl.RelativeTimeFormat(tag, { numeric: 'auto' });
  for (const u of ['second', 'minute', 'hour', 'day'] as const)
    for (let n = -40; n <= 40; n++) out.add(shape(rtf.format(n, u)));
  for (const unit of ['byte', 'kilobyte', 'megabyte', 'gigabyte'])
    for (const v of [1, 2, 5, 21, 1.5])
      out.add(shape(new Intl.NumberFormat(tag, { style: 'unit', unit, unitDisplay: 'short' }).format(v)));
  for (const unit of ['second', 'minute', 'hour', 'day'])
    for (const v of [1, 2, 5, 21])
      for (const d of ['short', 'long'] as const)
        out.add(shape(new Intl.NumberFormat(tag, { style: 'unit', unit, unitDisplay: d }).format(v)));
  return out;
}

/**
 * A test for one language: true when `text` is a string of that language (a template's
 * {{placeholders}} match anything), user data, a date, time, size or number as the client
 * formats them, a URL, an email address, or code.
 */
export function localeChecker(lang: Lang, data: string[], codes: string[]): (text: string) => boolean {
  // A placeholder becomes a control character first, so that stripping the ends keeps it.
  // The language switch names each language in itself ("English" in the Russian file too); elsewhere
  // a language is named in the interface language, so the other language's own name is foreign.
  const other = JSON.parse(fs.readFileSync(path.join(ROOT, 'locales', lang, 'web.json'), 'utf8')).languages?.[
    lang === 'ru' ? 'en' : 'ru'
  ];
  const strings = localeStrings(lang)
    .filter((s) => s !== other)
    .map((s) => strip(s.replace(/\{\{\s*\w+\s*\}\}/g, '\u0000')))
    .filter(Boolean);
  const exact = new Set(strings.filter((s) => !s.includes('\u0000')));
  // A template that is mostly placeholders ("{{name}}", "{{a}} · {{b}}") would match anything: only its letters count.
  const templates = strings
    .filter((s) => s.includes('\u0000') && /\p{L}{2}/u.test(s))
    .map((s) => s.split('\u0000').map(escape).join('[\\s\\S]*?'));
  // Template text may end a node early (the rest is a link or a bold value): a template's parts count alone too.
  const parts = strings
    .filter((s) => s.includes('\u0000'))
    .flatMap((s) => s.split('\u0000').map(strip))
    .filter((s) => /\p{L}{2}/u.test(s));
  for (const p of parts) exact.add(p);
  const combined = templates.length ? new RegExp(`^(?:${templates.join('|')})$`, 'u') : /^$/;
  const shapes = intlShapes(lang);
  const mine = data.map(strip).filter((d) => d.length > 3);
  const known = new Set([...data.map(strip), ...codes]);
  // URLs, addresses, paths, lower-case identifiers with separators (kind.id, snake_case), tokens with digits.
  const CODE = new RegExp(
    String.raw`^(?:https?:\/\/\S+|[\w.+-]+@[\w.-]+|\/\S*|[a-z0-9-]+(?:[._:/-][a-z0-9-]+)+|` +
      String.raw`[a-z]*\d[\w]*|[a-z0-9-]*_[a-z0-9_-]*|#[\w-]+)$`,
    'u',
  );
  // IANA time zone ids, and the time-zone picker's names ("Германия (GMT+1)", "New York (GMT-5)": Intl's words with the
  // offset).
  const TIME_ZONE = new RegExp(
    String.raw`^(?:Africa|America|Antarctica|Arctic|Asia|Atlantic|Australia|Europe|Indian|Pacific|Etc)\/[\w +/-]+$` +
      String.raw`|^UTC$|^(?:.+ \()?GMT(?:[+-][\d:]+)?$`,
  );
  return (raw: string) => {
    const s = strip(raw);
    if (!/\p{L}/u.test(s)) return true;
    if (exact.has(s) || known.has(s) || CODE.test(s) || TIME_ZONE.test(s) || shapes.has(shape(s))) return true;
    if (mine.some((d) => s.includes(d))) return true;
    return combined.test(s);
  };
}

/** The texts a person sees on the page (or in the open dialog): text nodes, placeholders, titles, labels, options. */
export async function visibleTexts(page: Page, scope = 'body'): Promise<string[]> {
  return page.evaluate((scope) => {
    const root = document.querySelector(scope);
    if (!root) return [];
    const out: string[] = [];
    const skip = (el: Element) => el.closest('script, style, code, pre, .md, textarea, [data-walk-skip]');
    const shown = (el: Element) => (el as HTMLElement).checkVisibility?.({ checkVisibilityCSS: true }) ?? true;
    // A help text whose inline Markdown is shown as code, bold or links (`.inline-md`) is read whole,
    // written back as the Markdown of its locale string, so that it is checked as the one string it is.
    const hints = new Set<Element>();
    const asMarkdown = (h: Element) =>
      [...h.childNodes]
        .map((c) => {
          const text = c.textContent ?? '';
          if (c.nodeName === 'CODE') return `\`${text}\``;
          if (c.nodeName === 'STRONG') return `**${text}**`;
          if (c.nodeName === 'A') return `[${text}](${(c as Element).getAttribute('href')})`;
          return text;
        })
        .join('');
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || !n.textContent?.trim() || el.closest('option')) continue;
      if (scope === 'body' && el.closest('dialog[open]')) continue;
      const hint = el.closest('.inline-md');
      if (hint) {
        if (!hints.has(hint) && shown(hint)) out.push(asMarkdown(hint).trim());
        hints.add(hint);
        continue;
      }
      if (skip(el)) continue;
      if (shown(el)) out.push(n.textContent.trim());
    }
    for (const el of root.querySelectorAll('[placeholder], [title], [aria-label], img[alt]')) {
      if ((scope === 'body' && el.closest('dialog[open]')) || !shown(el) || skip(el)) continue;
      for (const a of ['placeholder', 'title', 'aria-label', 'alt']) {
        const v = el.getAttribute(a);
        if (v?.trim()) out.push(v.trim());
      }
    }
    for (const sel of root.querySelectorAll('select')) {
      if (sel.matches('[data-testid="language"]')) continue;
      if ((scope === 'body' && sel.closest('dialog[open]')) || !shown(sel)) continue;
      for (const o of sel.options) if (o.text.trim()) out.push(o.text.trim());
    }
    return out;
  }, scope);
}

/**
 * Controls (buttons, links, fields, badges) whose box reaches past the viewport's right edge, and the page's overflow.
 */
export async function offscreen(page: Page, opts: { tablesFit?: boolean } = {}): Promise<string[]> {
  return page.evaluate((tablesFit) => {
    const width = document.documentElement.clientWidth;
    const found: string[] = [];
    const scroller = document.scrollingElement;
    if (scroller && scroller.scrollWidth > window.innerWidth)
      found.push(`the page scrolls sideways: ${scroller.scrollWidth} > ${window.innerWidth}`);
    for (const el of document.querySelectorAll('button, a[href], input, select, textarea, .badge, [role="status"]')) {
      if (!(el as HTMLElement).checkVisibility?.({ checkVisibilityCSS: true })) continue;
      if (el.closest('.sidebar:not(.nav-open .sidebar), .sr-only, .skip, .toasts')) continue;
      const r = el.getBoundingClientRect();
      if (!r.width || !r.height || r.right <= 0) continue;
      // Inside a box that scrolls on its own (a wide table), the control is reached by scrolling that box;
      // on a desktop screen (`tablesFit`) a table must fit without it.
      let clipped = false;
      for (let p = el.parentElement; p && p !== document.body && !tablesFit; p = p.parentElement) {
        const o = getComputedStyle(p).overflowX;
        // (A box that hides its overflow does not count: what it cuts off cannot be reached at all.)
        if (
          (o === 'auto' || o === 'scroll') &&
          p.getBoundingClientRect().right <= width + 1 &&
          p.scrollWidth > p.clientWidth
        ) {
          clipped = true;
          break;
        }
      }
      if (r.right > width + 1 && !clipped) {
        const label = (el.getAttribute('aria-label') || el.textContent || el.getAttribute('placeholder') || el.tagName)
          .trim()
          .slice(0, 40);
        const classes =
          el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : '';
        found.push(`${el.tagName.toLowerCase()}${classes} "${label}" ends at ${Math.round(r.right)} px`);
      }
    }
    return found;
  }, opts.tablesFit ?? false);
}

/** API requests in flight per page, and when the last one started or ended (see apiSettled). */
const traffic = new WeakMap<Page, { inFlight: number; at: number }>();

/** Counts the page's API requests from now on (the live updates' stream, which stays open, aside). */
function track(page: Page): { inFlight: number; at: number } {
  const known = traffic.get(page);
  if (known) return known;
  const s = { inFlight: 0, at: Date.now() };
  traffic.set(page, s);
  const api = (r: Request) => {
    const p = new URL(r.url()).pathname;
    return p.startsWith('/api/') && !p.startsWith('/api/live');
  };
  page.on('request', (r) => {
    if (!api(r)) return;
    s.inFlight++;
    s.at = Date.now();
  });
  const ended = (r: Request) => {
    if (!api(r)) return;
    s.inFlight--;
    s.at = Date.now();
  };
  page.on('requestfinished', ended);
  page.on('requestfailed', ended);
  return s;
}

/**
 * Waits until the page has no API request in flight and none has started or ended for `quietMs`: what it shows
 * rests on its data. Fails (after 15 s) rather than going on with a page that is still loading.
 */
export async function apiSettled(page: Page, quietMs = 200): Promise<void> {
  const s = track(page);
  await waitFor('the page to finish its API requests', () => s.inFlight <= 0 && Date.now() - s.at >= quietMs);
}

/** Opens a client route and waits until the page has rendered its data (its requests done, no spinner left). */
export async function visit(page: Page, route: string): Promise<void> {
  track(page);
  await page.evaluate((r) => {
    location.hash = r;
  }, route);
  await page.locator('#page-title').first().waitFor({ state: 'attached' });
  await apiSettled(page);
  await waitFor(
    `${route} to render its data (no spinner left)`,
    async () => (await page.locator('main .loading, main .spinner').count()) === 0,
  );
  await page.waitForTimeout(120);
}

/** Logs in through the form of a fresh browser. */
export async function login(page: Page, baseUrl: string): Promise<void> {
  track(page);
  await page.goto(baseUrl);
  await page.locator('input[name="email"]').fill(ADMIN.email);
  await page.locator('input[name="password"]').fill(ADMIN.password);
  await page.locator('form button[type="submit"]').click();
  await page.locator('#page-title').waitFor();
}

/**
 * The dialogs a page opens from its header's primary button (new provider, target, tracker,
 * user…): each is opened, `inspect` runs for it (once per kind in a kind picker), and it is closed. A button still
 * disabled once the page's requests are done is disabled for a reason (a tracker needs a provider) and is passed
 * over; one that does not open its dialog fails the walk.
 */
export async function eachDialog(page: Page, inspect: (label: string) => Promise<void>): Promise<number> {
  const opener = page.locator('.page-actions .btn-primary');
  let n = 0;
  for (let i = 0; i < (await opener.count()); i++) {
    // Enabled once the page's data (the plugin list) is in.
    await apiSettled(page);
    if (await opener.nth(i).isDisabled()) continue;
    await opener.nth(i).click();
    const dialog = page.locator('dialog[open]');
    await dialog.waitFor({ timeout: 15_000 }).catch(async () => {
      throw new Error(
        `the page's "${(await opener.nth(i).textContent())?.trim()}" button opened no dialog within 15 s`,
      );
    });
    await page.waitForTimeout(100);
    const picker = dialog.locator('select[data-testid$="-kind"]');
    if (await picker.count()) {
      const kinds = await picker
        .locator('option')
        .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value).filter(Boolean));
      for (const k of kinds) {
        await picker.selectOption(k);
        await page.waitForTimeout(60);
        await inspect(`dialog-${k}`);
        n++;
      }
    } else {
      await inspect('dialog');
      n++;
    }
    await dialog.locator('.modal-head .icon-btn').click();
    await dialog.waitFor({ state: 'detached' }).catch(() => page.keyboard.press('Escape'));
  }
  return n;
}

/**
 * Table cells shown on a phone without the name of their column: a stacked row's value (after the
 * first, and besides its buttons) must print its header's text above it.
 */
export async function unlabelled(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    for (const table of document.querySelectorAll<HTMLTableElement>('table.table')) {
      const head = table.tHead?.rows[0];
      if (!head || !table.checkVisibility()) continue;
      const names = [...head.cells].map((c) => (c.querySelector('.sr-only') ? '' : (c.textContent ?? '').trim()));
      for (const row of table.tBodies[0]?.rows ?? []) {
        if (row.cells.length !== names.length) continue;
        [...row.cells].forEach((cell, i) => {
          if (i === 0 || !names[i] || cell.classList.contains('row-actions') || !cell.textContent?.trim()) return;
          const shown = getComputedStyle(cell, '::before').content;
          if (!shown || shown === 'none' || shown === 'normal' || shown === '""')
            found.push(`"${cell.textContent.trim().slice(0, 30)}" without "${names[i]}"`);
        });
      }
    }
    return found;
  });
}

/** Values to copy (a webhook address, a token) that their field does not show whole. */
export async function cutValues(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLTextAreaElement | HTMLInputElement>('[data-testid="copy-value"]')]
      .filter(
        (el) => el.checkVisibility() && (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1),
      )
      .map(
        (el) =>
          `"${el.value.slice(0, 40)}" is cut ` +
          `(${el.scrollWidth}×${el.scrollHeight} in ${el.clientWidth}×${el.clientHeight})`,
      ),
  );
}
