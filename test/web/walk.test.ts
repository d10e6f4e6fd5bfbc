/**
 * Every page of the web client, in Russian and then in English, in real Chromium: each visible
 * string (text, placeholders, titles, labels, options) must come from that language's locale
 * files (the client's and the plugins'), user data, a formatted date or number, a URL or code;
 * the same for the dialogs the pages open (a new provider and target of every kind, a tracker,
 * a user). The administrator's saved language applies at login on a fresh browser, and the
 * language switch saves the choice to the account. In both languages no control reaches past the
 * right edge and no page scrolls sideways, at 1366×768 (tables fit) and at 390×844. Routes are read
 * from routes.tsx, so new pages are walked too.
 */
import t, { type Test } from 'tap';
import { ensureBuilt, openBrowser, until } from './browser.ts';
import {
  concrete,
  cutValues,
  eachDialog,
  type Lang,
  localeChecker,
  localeKeys,
  login,
  offscreen,
  routePaths,
  startDemo,
  unlabelled,
  visibleTexts,
  visit,
} from './pages.ts';

ensureBuilt();

const demo = await startDemo('ru');
const b = await openBrowser({ width: 1366, height: 768 });
const { page } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await demo.close();
});

const routes = routePaths();

async function walk(t: Test, lang: Lang): Promise<void> {
  const ok = localeChecker(lang, demo.data, demo.codes);
  const foreign: string[] = [];
  const wide: string[] = [];
  const check = async (where: string, scope?: string) => {
    for (const s of await visibleTexts(page, scope)) if (!ok(s)) foreign.push(`${where}: ${JSON.stringify(s)}`);
  };
  let pages = 0;
  const dialogs: string[] = [];
  for (const route of routes) {
    const path = concrete(route, demo);
    if (!path) {
      t.comment(`${route}: no demo value for its parameters`);
      continue;
    }
    await visit(page, path);
    await check(path);
    for (const f of [...(await offscreen(page, { tablesFit: true })), ...(await cutValues(page))])
      wide.push(`${path}: ${f}`);
    await eachDialog(page, async (name) => {
      dialogs.push(`${path} ${name}`);
      await check(`${path} ${name}`, 'dialog[open]');
    });
    pages++;
  }
  t.ok(pages >= routes.length - 1 && pages > 15, `${pages} pages walked in ${lang}`);
  t.ok(
    ['/providers dialog-webhook', '/targets dialog-chat_webhook', '/trackers dialog', '/admin/users dialog'].every(
      (d) => dialogs.includes(d),
    ),
    `dialogs opened in ${lang}: ${dialogs.join(', ')}`,
  );
  t.same(foreign, [], `every visible string is ${lang}`);
  t.same(wide, [], `at 1366×768 in ${lang} every control is on screen, tables included, and values to copy show whole`);
  t.same(b.problems, [], 'no console errors or missing strings');
}

t.test('Russian: the saved language applies at login, every page speaks Russian', async (t) => {
  await login(page, demo.svc.url);
  t.equal(
    await page.evaluate(() => document.documentElement.lang),
    'ru',
    "the account's language, not the browser's (en-US)",
  );
  await walk(t, 'ru');
});

t.test('English: the switch saves the language to the account, every page speaks English', async (t) => {
  await page.locator('[data-testid="language"]').first().selectOption('en');
  await page.getByRole('link', { name: localeKeys('en')['nav.overview'], exact: true }).waitFor();
  // Up to 15 s, not 5 s, for the client's save to reach the account (a loaded machine can take longer); the assertion
  // below reads it again.
  const locale = async () => (await demo.svc.request('GET', '/api/v1/users/me', { token: demo.token })).body.locale;
  await until(async () => (await locale()) === 'en', 'the language saved to the account', 15_000).catch(
    () => undefined,
  );
  t.equal(
    (await demo.svc.request('GET', '/api/v1/users/me', { token: demo.token })).body.locale,
    'en',
    'saved to the account',
  );
  await walk(t, 'en');
});

t.test('phone: no control past the right edge of a 390 px screen, in either language', async (t) => {
  await page.setViewportSize({ width: 390, height: 844 });
  const found: string[] = [];
  for (const lang of ['en', 'ru'] as const) {
    await demo.svc.request('PATCH', '/api/v1/users/me', { token: demo.token, body: { locale: lang } });
    await page.reload();
    await page.locator('#page-title').waitFor();
    t.equal(await page.evaluate(() => document.documentElement.lang), lang, `the pages speak ${lang}`);
    await phoneWalk(t, lang, found);
  }
  t.same(
    found,
    [],
    'every row shows its status and actions on screen, each value under its name, values to copy whole',
  );
});

async function phoneWalk(t: Test, lang: Lang, found: string[]): Promise<void> {
  for (const route of routes) {
    const path = concrete(route, demo);
    if (!path) continue;
    await visit(page, path);
    for (const f of await offscreen(page)) found.push(`${lang} ${path}: ${f}`);
    for (const f of [...(await unlabelled(page)), ...(await cutValues(page))]) found.push(`${lang} ${path}: ${f}`);
    // A header menu (the chat's pickers and actions fold behind "⋯"): open, everything in it on screen.
    const toggle = page.getByTestId('chat-tools-toggle');
    if (await toggle.isVisible()) {
      await toggle.click();
      t.ok(await page.locator('#chat-tools').isVisible(), `${path}: the chat actions open from the header`);
      for (const f of await offscreen(page)) found.push(`${lang} ${path} (menu open): ${f}`);
      await toggle.click();
    }
  }
}
