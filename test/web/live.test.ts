/**
 * Live updates in a real Chromium against the real service: with the event log open, an event posted to the
 * provider's webhook with a plain HTTP request appears in the list within 2 s, without a reload, and its status
 * follows its delivery; a failed delivery shows when its next attempt is due; the deferred queue, the overview and a
 * provider's webhook log take new rows the same way.
 */
import t from 'tap';
import { startService, startSink } from '../helpers/service.ts';
import { ensureBuilt, openBrowser, until } from './browser.ts';

ensureBuilt();

const TOKEN = 'sharedtoken1';
const sink = await startSink();
const svc = await startService({ SERVICE_LOG_LEVEL: 'WARNING' });
const b = await openBrowser(undefined, { shots: 'live-failed' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
  await sink.close();
});
const token = svc.admin.token;

/** A quiet window around the present, in UTC, so deferrable events are deferred now. */
function windowAroundNow(): { start: string; end: string; timezone: string } {
  const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
  return { start: hhmm(Date.now() - 3600_000), end: hhmm(Date.now() + 3600_000), timezone: 'UTC' };
}

const target = (
  await svc.request('POST', '/api/targets', {
    token,
    body: { kind: 'recorder', name: 'Sink', config: { url: sink.url }, locale: 'en' },
  })
).body;
const source = async (name: string, quiet: boolean) => {
  const p = (
    await svc.request('POST', '/api/providers', {
      token,
      body: { kind: 'example', name, config: { shared_token: TOKEN } },
    })
  ).body;
  const tr = (
    await svc.request('POST', '/api/trackers', {
      token,
      body: { provider_id: p.id, name: `${name} tracker`, ...(quiet ? { quiet_hours: windowAroundNow() } : {}) },
    })
  ).body;
  await svc.request('PUT', `/api/trackers/${tr.id}/targets/${target.id}`, { token });
  return p.webhook_url as string;
};
const loud = await source('Loud', false);
const quiet = await source('Quiet', true);

/** A plain HTTP request to the webhook, as curl would send it. */
const post = async (url: string, type: string, name: string) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-example-token': TOKEN },
    body: JSON.stringify({ type, payload: { name } }),
  });
  if (res.status !== 202) throw new Error(`webhook answered ${res.status}`);
};

const liveOn = () => page.locator('[data-testid="live-state"][data-state="live"]').waitFor();

t.test('pages update by themselves', async (t) => {
  await step('login', async () => {
    await b.logIn(svc.url, svc.admin.email, 'correct horse battery');
  });

  await step('the event log takes a new event within 2 s', async () => {
    await page.goto(`${svc.url}/#/events`);
    await page.getByRole('heading', { name: 'Event log' }).waitFor();
    await liveOn();
    // Set on this document: still there afterwards means the page was not reloaded.
    await page.evaluate(() => {
      (window as unknown as { liveMarker: number }).liveMarker = 1;
    });
    const started = Date.now();
    await post(loud, 'alarm', 'smoke in the attic');
    const row = page.locator('[data-testid="event-row"]').filter({ hasText: 'smoke in the attic' });
    await row.waitFor({ timeout: 2000 });
    t.ok(Date.now() - started < 2000, `the event appeared after ${Date.now() - started} ms`);
    await row.getByText('Dispatched').waitFor();
    t.equal(await page.evaluate(() => (window as unknown as { liveMarker?: number }).liveMarker), 1, 'no reload');
  });

  await step('a failed delivery says when it is tried again', async () => {
    sink.respond(503);
    await post(loud, 'alarm', 'flood in the cellar');
    const row = page.locator('[data-testid="event-row"]').filter({ hasText: 'flood in the cellar' });
    await row.waitFor({ timeout: 2000 });
    await row.getByRole('button', { name: 'Show or hide details' }).click();
    const due = page.locator('[data-testid="due-time"]').first();
    await due.waitFor();
    t.match(await due.textContent(), /^next attempt (in \d+ seconds?|any moment)$/, 'the next attempt, relative');
    t.match(await due.getAttribute('title'), /tried again automatically on \d{1,2} \w{3} \d{4}, \d{2}:\d{2}/);
    sink.respond(200);
  });

  await step('the deferred queue takes a deferred event', async () => {
    await page.goto(`${svc.url}/#/deferred`);
    await page.getByRole('heading', { name: 'Deferred notifications' }).waitFor();
    await liveOn();
    await post(quiet, 'thing_happened', 'late parcel');
    await page.locator('[data-testid="deferred-row"]').filter({ hasText: 'late parcel' }).waitFor({ timeout: 2000 });
  });

  await step('the overview counts it and lists the recent events', async () => {
    await page.goto(`${svc.url}/#/`);
    await liveOn();
    const deferred = page.locator('.stat-card').filter({ hasText: 'Deferred' }).locator('.stat-num');
    const before = Number(await deferred.textContent());
    await post(quiet, 'thing_happened', 'second parcel');
    await until(async () => Number(await deferred.textContent()) === before + 1, 'the deferred count to grow', 2000);
    await page.locator('.recent').getByText('second parcel', { exact: false }).waitFor({ timeout: 2000 });
  });

  await step("a provider's webhook log takes a new call", async () => {
    await page.goto(`${svc.url}/#/providers`);
    const card = page.locator('.item-card').filter({ hasText: 'Loud' });
    await card.getByRole('button', { name: 'Recent webhook calls' }).click();
    const rows = card.locator('table tbody tr');
    await rows.first().waitFor();
    const before = await rows.count();
    await post(loud, 'alarm', 'third alarm');
    await until(async () => (await rows.count()) === before + 1, 'the new call in the log', 2000);
  });

  t.same(b.problems, [], 'no console errors or missing strings');
});
