/**
 * The overview's first-run checklist in a real Chromium: on a fresh instance (which has the built-in self-monitoring
 * source, not counted as one of yours) it shows 0 of 4 steps done; a source, a target (with its Send test), a link
 * and an event posted to the webhook each tick a step, the last one live, without a reload; then the list folds
 * away, and later visits show the overview without it.
 */
import t from 'tap';
import { startService, startSink } from '../helpers/service.ts';
import { ensureBuilt, openBrowser, until } from './browser.ts';

ensureBuilt();

const sink = await startSink();
const svc = await startService({
  SERVICE_LOG_LEVEL: 'WARNING',
  SERVICE_PLUGINS: '@herald/provider-bridge-self,@herald/provider-webhook,herald-target-recorder',
});
const b = await openBrowser(undefined, { shots: 'onboarding-failed' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
  await sink.close();
});
const token = svc.admin.token;
const call = async (method: string, p: string, body?: unknown) => {
  const r = await svc.request(method, p, { token, body });
  if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${r.text}`);
  return r.body;
};

// The second chunk of strings (every page but the overview and the login): which ones the browser fetched.
const more: string[] = [];
page.on('request', (r) => {
  const m = /\/assets\/(more-[a-z]+)-[\w-]+\.js$/.exec(r.url());
  if (m) more.push(m[1]!);
});
const checklist = page.getByTestId('onboarding');
const progress = page.getByTestId('onboarding-progress');
const doneSteps = async () =>
  page.$$eval('[data-testid^="step-"]', (els) =>
    els.map((e) => `${e.getAttribute('data-testid')}=${e.getAttribute('data-done')}`),
  );
const reloadOverview = async () => {
  await page.reload();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await checklist.waitFor();
};

t.test('the checklist leads a new operator to the first event', async (t) => {
  const builtIn = (await call('GET', '/api/providers')).providers as { kind: string }[];
  t.ok(
    builtIn.some((p) => p.kind === 'bridge_self'),
    'the fresh instance has the self-monitoring source',
  );

  await step('a fresh instance: 0 of 4', async () => {
    await b.logIn(svc.url, svc.admin.email, 'correct horse battery');
    await checklist.waitFor();
    t.equal(await progress.textContent(), '0 of 4 done', 'the self-monitoring source does not count');
    t.same(await doneSteps(), ['step-source=false', 'step-target=false', 'step-link=false', 'step-event=false']);
    t.equal(await checklist.getAttribute('open'), '', 'unfolded');
    // Each step links to the page that does it.
    t.equal(await page.getByTestId('step-source').getByRole('link').getAttribute('href'), '#/providers');
    t.equal(await page.getByTestId('step-target').getByRole('link').getAttribute('href'), '#/targets');
    t.equal(await page.getByTestId('step-link').getByRole('link').getAttribute('href'), '#/trackers');
    t.equal(await page.getByTestId('step-event').getByRole('link').getAttribute('href'), '#/events');
    // What each kind of source is, before there is one (the generic webhook among them).
    const kinds = await page.getByTestId('onboarding-kinds').textContent();
    t.match(kinds, /Webhook/i, 'the kinds of source are listed');
    t.notMatch(kinds, /self-monitoring/i, 'not the built-in one');
    // The recent events say what to do next.
    await page.getByText('No events yet: add a source first, then send it something.').waitFor();
  });

  const provider = await call('POST', '/api/providers', {
    kind: 'webhook',
    name: 'Build server',
    config: { mapping: { title: 'title', body: 'body' }, secret: '0123456789abcdef' },
    auth_mode: 'bearer',
  });
  await step('a source: 1 of 4, with what to paste and a curl', async () => {
    await reloadOverview();
    t.equal(await progress.textContent(), '1 of 4 done');
    t.same(await doneSteps(), ['step-source=true', 'step-target=false', 'step-link=false', 'step-event=false']);
    const panel = page.getByTestId('onboarding-connection');
    await panel.waitFor();
    t.equal(
      await panel.getByTestId('connection-webhook_url').getByTestId('copy-value').inputValue(),
      provider.webhook_url,
    );
    const text = (await panel.getByTestId('connection-example').getByTestId('copy-code').textContent()) ?? '';
    t.match(text, /^curl /, 'a copy-paste curl');
    t.match(text, provider.webhook_url, 'to the webhook');
  });

  const target = await call('POST', '/api/targets', {
    kind: 'recorder',
    name: 'Sink',
    config: { url: sink.url },
    locale: 'en',
  });
  await step('a target: 2 of 4, and Send test reaches it', async () => {
    await reloadOverview();
    t.equal(await progress.textContent(), '2 of 4 done');
    const before = sink.received.length;
    await page.getByTestId('onboarding-send-test').click();
    t.match(await page.getByTestId('onboarding-test-result').textContent(), /^The test message was delivered\.$/);
    t.ok(sink.received.length > before, 'the target got the test');
  });

  const tracker = await call('POST', '/api/trackers', { provider_id: provider.id, name: 'Builds' });
  await call('PUT', `/api/trackers/${tracker.id}/targets/${target.id}`);
  await step('linked: 3 of 4', async () => {
    await reloadOverview();
    t.equal(await progress.textContent(), '3 of 4 done');
    t.same(await doneSteps(), ['step-source=true', 'step-target=true', 'step-link=true', 'step-event=false']);
  });

  await step('the first event ticks the last step live, and the list folds away', async () => {
    await page.locator('[data-testid="live-state"][data-state="live"]').waitFor();
    await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = 1;
    });
    const r = await fetch(provider.webhook_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer 0123456789abcdef' },
      body: JSON.stringify({ title: 'First light', body: 'It works' }),
    });
    t.equal(r.status, 202, 'the webhook took it');
    await until(async () => (await progress.textContent()) === '4 of 4 done', 'the last step to tick', 4000);
    t.same(await doneSteps(), ['step-source=true', 'step-target=true', 'step-link=true', 'step-event=true']);
    t.equal(await checklist.getAttribute('open'), null, 'folded');
    await page.getByText('All set: your first event arrived.', { exact: false }).waitFor({ state: 'attached' });
    t.equal(await page.evaluate(() => (window as unknown as { marker?: number }).marker), 1, 'no reload');
    await page.locator('.recent').getByText('First light', { exact: false }).waitFor();
  });

  await step('remembered: the next visit shows the overview alone', async () => {
    await page.reload();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.locator('.recent').getByText('First light', { exact: false }).waitFor();
    await page.getByTestId('charts').waitFor();
    t.equal(await checklist.count(), 0, 'no checklist');
    t.same(more, [], 'the login and the overview (checklist and charts too) need only the first-visit strings');
  });

  await step('another page brings the rest of the strings', async () => {
    await b.nav('Targets');
    await page.getByText('Sink', { exact: true }).first().waitFor();
    t.same(more, ['more-en'], 'loaded with the page');
  });

  await step('the event log shows the text the target received', async () => {
    await b.nav('Event log');
    const row = page.locator('[data-testid="event-row"]').filter({ hasText: 'First light' });
    await row.getByRole('button', { name: 'Show or hide details' }).click();
    const text = page.getByTestId('delivered-text');
    await text.waitFor();
    t.equal(await text.locator('figcaption').textContent(), 'Text it received');
    const sent = sink.received
      .map((m: { body: { title?: string; body?: string } }) => m.body)
      .find((m) => m.title === 'First light')!;
    t.match(sent.body, /It works/, 'the target got the body');
    t.equal(await text.locator('strong').textContent(), sent.title, 'the title as the target got it');
    t.equal(await text.locator('p').textContent(), sent.body, 'the body as the target got it');
    t.notOk(await page.locator('.ops-details pre.json').first().isVisible(), 'the payload JSON stays folded');
  });

  t.same(b.problems, [], 'no console errors or missing strings');
});
