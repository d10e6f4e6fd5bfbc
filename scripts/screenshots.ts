/**
 * `npm run screenshots`: a service with demo data (first-run setup, a provider, target, tracker,
 * event, chat with a reply from a fake model, memory entry, backup) and a PNG of every page of
 * the web client at 1366×768 and 390×844, in English and Russian, under
 * test-output/screenshots/pages/<lang>-<width>/<route>.png. Prints the count; exits 1 when a
 * page does not render, or has a control past the right edge or scrolls sideways at either width (a table
 * fits at 1366 px; on a phone it may scroll in its own box), each listed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt, openBrowser, SCREENSHOTS } from '../test/web/browser.ts';
import { concrete, type Lang, login, offscreen, routeName, routePaths, startDemo, visit } from '../test/web/pages.ts';

ensureBuilt();
const OUT = path.join(SCREENSHOTS, 'pages');
const SIZES = [
  { width: 1366, height: 768 },
  { width: 390, height: 844 },
];
const LANGS: Lang[] = ['en', 'ru'];

const demo = await startDemo('en');
const b = await openBrowser(SIZES[0]);
const { page } = b;
page.setDefaultTimeout(10_000);
let count = 0;
const offenders: string[] = [];
try {
  await login(page, demo.svc.url);
  for (const lang of LANGS) {
    await demo.svc.request('PATCH', '/api/v1/users/me', { token: demo.token, body: { locale: lang } });
    await page.goto(`${demo.svc.url}/#/`);
    await page.reload();
    await page
      .locator('#page-title')
      .waitFor()
      .catch(async (err) => {
        await b.shot('screenshots-failed');
        console.error(b.problems.join('\n'));
        throw err;
      });
    for (const size of SIZES) {
      await page.setViewportSize(size);
      const dir = path.join(OUT, `${lang}-${size.width}`);
      fs.mkdirSync(dir, { recursive: true });
      for (const route of routePaths()) {
        const p = concrete(route, demo);
        if (!p) continue;
        try {
          await visit(page, p);
        } catch (err) {
          offenders.push(
            `${lang} ${size.width} ${p}: the page did not render (${(err as Error).message.split('\n')[0]})`,
          );
        }
        await page.screenshot({ path: path.join(dir, `${routeName(route)}.png`), fullPage: true });
        count++;
        // On a desktop screen tables fit too; on a phone a wide table may scroll in its own box.
        const tablesFit = size.width > 400;
        for (const f of await offscreen(page, { tablesFit })) offenders.push(`${lang} ${size.width} ${p}: ${f}`);
      }
    }
  }
} finally {
  await b.close();
  await demo.close();
}
console.log(`${count} screenshots in ${path.relative(process.cwd(), OUT)}`);
if (offenders.length) {
  console.error(`Pages that did not render, or with controls off screen:\n${offenders.join('\n')}`);
  process.exitCode = 1;
}
