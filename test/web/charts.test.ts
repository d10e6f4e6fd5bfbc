/**
 * The overview's charts in a real Chromium, in Russian: with events in the database the three charts draw on canvas,
 * their legends and the screen-reader tables read in Russian and carry the figures `GET /api/stats` gives, and the
 * legend stays readable (contrast ≥ 4.5) in light and dark mode. uPlot is a chunk of its own the overview loads.
 */
import t from 'tap';
import { ensureBuilt, openBrowser, until } from './browser.ts';
import { login, startDemo } from './pages.ts';

ensureBuilt();

const demo = await startDemo('ru');
const b = await openBrowser(undefined, { shots: 'charts-failed' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await demo.close();
});
const call = async (method: string, p: string) => {
  const r = await demo.svc.request(method, p, { token: demo.token });
  if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${r.text}`);
  return r.body;
};

/** WCAG contrast of two CSS colours `rgb(r, g, b)`. */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = (c.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((x) => {
      const v = Number(x) / 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

t.test('the overview draws its charts from the events in the database', async (t) => {
  // The demo's source linked to its target, and two events more through the webhook, so deliveries have figures.
  const trackers = (await call('GET', '/api/trackers')).trackers as { id: string }[];
  const targets = (await call('GET', '/api/targets')).targets as { id: string }[];
  await call('PUT', `/api/trackers/${trackers[0]!.id}/targets/${targets[0]!.id}`);
  const source = ((await call('GET', '/api/providers')).providers as { kind: string; webhook_url: string }[]).find(
    (p) => p.kind === 'webhook',
  )!;
  for (const title of ['Deploy started', 'Deploy finished']) {
    const r = await demo.svc.request('POST', new URL(source.webhook_url).pathname, {
      headers: { authorization: 'Bearer 0123456789abcdef' },
      body: { title, body: 'Release notes' },
    });
    t.equal(r.status, 202, `${title}: taken`);
  }
  await until(async () => {
    const now = await call('GET', '/api/stats');
    return !now.statuses.includes('pending') && now.targets.some((x: { sent: number }) => x.sent === 2);
  }, 'both deliveries to be sent');
  const stats = await call('GET', `/api/stats?tz=UTC`);

  await step('the charts draw on canvas, in Russian', async () => {
    await login(page, demo.svc.url);
    await page.getByRole('heading', { name: 'Обзор' }).waitFor();
    const charts = page.getByTestId('charts');
    await charts.waitFor();
    for (const id of ['chart-events', 'chart-targets']) {
      await page.getByTestId(id).locator('canvas').waitFor({ state: 'attached' });
      const size = await page
        .getByTestId(id)
        .locator('canvas')
        .evaluate((c: HTMLCanvasElement) => c.width * c.height);
      t.ok(size > 0, `${id}: a canvas with pixels`);
    }
    const legend = (id: string) =>
      page
        .getByTestId(id)
        .locator('.u-legend .u-label')
        .evaluateAll((els) => els.map((e) => e.textContent));
    t.same(
      await legend('chart-events'),
      [...stats.statuses.map((st: string) => ({ dispatched: 'Отправлено', dropped: 'Пропущено' })[st] ?? st)],
      'the status legend in Russian',
    );
    t.same(stats.statuses, ['dispatched', 'dropped'], 'the demo event dropped, two dispatched');
    t.same(await legend('chart-targets'), ['Доставлено', '95 % доставлены за'], 'the targets legend in Russian');
    // No failures yet: the third card says so instead of an empty chart.
    await page.getByText('За последние 30 дней сбоев доставки не было.').waitFor();
  });

  await step('the screen-reader tables carry the same figures', async () => {
    const events = page.getByTestId('chart-events-table');
    t.equal(await events.locator('caption').textContent(), 'События по дням (30 дней)');
    const today = stats.days.at(-1) as { total: number; counts: Record<string, number> };
    const cells = await events.locator('tbody tr').last().locator('td').allTextContents();
    t.same(
      cells,
      stats.statuses.map((st: string) => String(today.counts[st] ?? 0)),
      "today's events per status",
    );
    t.equal(today.counts.dispatched, 2, 'the two dispatched today');
    const target = (stats.targets as { name: string; sent: number; failed: number }[]).find(
      (x) => x.name === 'Team chat',
    )!;
    const row = page.getByTestId('chart-targets-table').locator('tbody tr').filter({ hasText: 'Team chat' });
    const [rate, p95, failures] = await row.locator('td').allTextContents();
    t.match(rate, /^100\s%$/, 'success rate as a percentage, as Russian writes it');
    t.match(p95, /^\d+(,\d+)? с$/, 'p95 in seconds, in Russian');
    t.equal(failures, String(target.failed));
  });

  for (const theme of ['light', 'dark'] as const) {
    await step(`the legend is readable in ${theme} mode`, async () => {
      await page.evaluate((v) => localStorage.setItem('herald.theme', v), theme);
      await page.reload();
      await page.getByTestId('chart-events').locator('canvas').waitFor({ state: 'attached' });
      const [fg, bg] = await page
        .getByTestId('chart-events')
        .locator('.u-legend .u-label')
        .first()
        .evaluate((e) => {
          let el: Element | null = e;
          let back = 'rgba(0, 0, 0, 0)';
          while (el && /rgba\(0, 0, 0, 0\)|transparent/.test(back)) {
            back = getComputedStyle(el).backgroundColor;
            el = el.parentElement;
          }
          return [getComputedStyle(e).color, back];
        });
      const ratio = contrast(fg!, bg!);
      t.ok(ratio >= 4.5, `${theme}: legend contrast ${ratio.toFixed(1)} ≥ 4.5`);
    });
  }
  t.same(b.problems, [], 'no console errors or missing strings');
});
