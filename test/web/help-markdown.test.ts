/**
 * Help text renders its inline Markdown: in every provider and target form, in English and Russian,
 * no field hint shows a literal backtick or `**`, and the hints that quote code (a broker address, an
 * entity glob) show it in a code element. No console errors.
 */
import t from 'tap';
import { ensureBuilt, openBrowser } from './browser.ts';
import { eachDialog, type Lang, login, startDemo, visit } from './pages.ts';

ensureBuilt();

for (const lang of ['en', 'ru'] as Lang[]) {
  t.test(`${lang}: field hints show code, not backticks`, async (t) => {
    const demo = await startDemo(lang);
    const b = await openBrowser({ width: 1366, height: 850 });
    const { page } = b;
    page.setDefaultTimeout(8000);
    t.teardown(async () => {
      await b.close();
      await demo.close();
    });
    await login(page, demo.svc.url);
    const raw: string[] = [];
    let hints = 0;
    let codes = 0;
    for (const route of ['/providers', '/targets']) {
      await visit(page, route);
      await eachDialog(page, async (label) => {
        const texts = await page.locator('dialog[open] .hint').allTextContents();
        hints += texts.length;
        codes += await page.locator('dialog[open] .hint .inline-md code').count();
        for (const text of texts) if (/`|\*\*/.test(text)) raw.push(`${route} ${label}: ${text}`);
      });
    }
    t.ok(hints > 20, `the forms have hints (${hints})`);
    t.ok(codes > 5, `code in hints is shown as code (${codes} elements)`);
    t.same(raw, [], 'no literal Markdown in a hint');
    t.same(b.problems, [], 'no console errors');
  });
}
