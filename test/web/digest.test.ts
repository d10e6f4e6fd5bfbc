/**
 * The quiet-hours digest in a real Chromium against the real service: the tracker form offers
 * "Release one by one" / "Send a digest" once quiet hours are on, and "Send a digest" is saved;
 * after a night's deferred events went out in a digest, the event log says so on their deliveries.
 */
import t from 'tap';
import { startService, startSink } from '../helpers/service.ts';
import { ensureBuilt, openBrowser } from './browser.ts';

ensureBuilt();

const TOKEN = 'sharedtoken1';
const sink = await startSink();
const svc = await startService({ SERVICE_LOG_LEVEL: 'WARNING' });
const b = await openBrowser(undefined, { shots: 'digest-failed' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
  await sink.close();
});
const token = svc.admin.token;

const target = (
  await svc.request('POST', '/api/targets', {
    token,
    body: { kind: 'recorder', name: 'Night sink', config: { url: sink.url }, locale: 'en' },
  })
).body;
const p = (
  await svc.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'Source', config: { shared_token: TOKEN } },
  })
).body;
const tr = (
  await svc.request('POST', '/api/trackers', {
    token,
    body: { provider_id: p.id, name: 'Night tracker', quiet_hours: { start: '22:00', end: '07:00', timezone: 'UTC' } },
  })
).body;
await svc.request('PUT', `/api/trackers/${tr.id}/targets/${target.id}`, { token });

t.test('the tracker form saves "Send a digest"; the event log shows deliveries sent in it', async (t) => {
  await step('login', async () => {
    await b.logIn(svc.url, svc.admin.email, 'correct horse battery');
  });

  await step('tracker form', async () => {
    await page.goto(`${svc.url}/#/trackers`);
    await page
      .getByRole('row', { name: /Night tracker/ })
      .getByRole('button', { name: 'Edit' })
      .click();
    const dialog = page.getByRole('dialog');
    const group = dialog.getByRole('radiogroup', { name: 'When the quiet hours end' });
    t.ok(await group.getByRole('radio', { name: /Release one by one/ }).isChecked(), 'one by one is the default');
    await group.getByRole('radio', { name: /Send a digest/ }).check();
    await b.shot('tracker-form-digest');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    const saved = (await svc.request('GET', `/api/trackers/${tr.id}`, { token })).body;
    t.equal(saved.quiet_release, 'digest', 'saved');
    t.same(saved.quiet_hours, { start: '22:00', end: '07:00', timezone: 'UTC' }, 'the window unchanged');
    // Without quiet hours there is nothing to release: the choice is not offered.
    await page
      .getByRole('row', { name: /Night tracker/ })
      .getByRole('button', { name: 'Edit' })
      .click();
    t.ok(
      await page
        .getByRole('dialog')
        .getByRole('radio', { name: /Send a digest/ })
        .isChecked(),
      'shown as saved',
    );
    await page.getByRole('dialog').getByTestId('quiet-toggle').uncheck();
    t.equal(await page.getByRole('dialog').getByTestId('quiet-release').count(), 0);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  });

  await step('event log', async () => {
    // A night: two events held, then released as one digest.
    svc.clock.set('2026-03-10T23:00:00Z');
    for (const name of ['one', 'two']) {
      const res = await fetch(p.webhook_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-example-token': TOKEN },
        body: JSON.stringify({ type: 'thing_happened', payload: { name } }),
      });
      t.equal(res.status, 202);
    }
    svc.clock.set('2026-03-11T07:00:01Z');
    await (svc.service.core.services.get('relay') as { tick(): Promise<void> }).tick();
    await sink.waitFor(1);
    t.match(sink.received[0].body.title, /Quiet hours digest: 2 notifications/);
    await page.goto(`${svc.url}/#/events?event_type=thing_happened`);
    const row = page.getByRole('row', { name: /Thing: one/ });
    await row.getByRole('button', { name: 'Show or hide details' }).click();
    const mark = page.getByTestId('in-digest').first();
    await mark.waitFor();
    t.equal((await mark.textContent())?.trim(), 'in the quiet-hours digest');
    await b.shot('events-in-digest');
  });
  t.same(b.problems, [], 'no console errors');
});
