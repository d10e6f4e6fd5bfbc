/**
 * Replay and outbound allow lists in a real Chromium against the real service: two events chosen
 * with their checkboxes on the event log, a target chosen in the replay dialog, the preview showing
 * the messages as that target would get them (today's template, the target's language), the replay
 * confirmed and reaching the loopback sink once each, recorded in the event's history; then an
 * administrator giving a target an outbound allow list in its form (a wrong entry is flagged first)
 * and the list saved.
 */
import t from 'tap';
import { newId } from '../../core/src/http/ids.ts';
import { startService, startSink } from '../helpers/service.ts';
import { settled } from '../helpers/settle.ts';
import { ensureBuilt, openBrowser, until } from './browser.ts';

ensureBuilt();

const TOKEN = 'sharedtoken1';
const old = await startSink();
const fresh = await startSink();
const svc = await startService({ SERVICE_LOG_LEVEL: 'WARNING' });
const b = await openBrowser(undefined, { shots: 'replay-failed' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
  await old.close();
  await fresh.close();
});
const token = svc.admin.token;

const tOld = (
  await svc.request('POST', '/api/targets', {
    token,
    body: { kind: 'recorder', name: 'Old sink', config: { url: old.url }, locale: 'en' },
  })
).body;
const tNew = (
  await svc.request('POST', '/api/targets', {
    token,
    body: { kind: 'recorder', name: 'New sink', config: { url: fresh.url }, locale: 'ru' },
  })
).body;
const p = (
  await svc.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'Source', config: { shared_token: TOKEN } },
  })
).body;
const tr = (await svc.request('POST', '/api/trackers', { token, body: { provider_id: p.id, name: 'Source tracker' } }))
  .body;
await svc.request('PUT', `/api/trackers/${tr.id}/targets/${tOld.id}`, { token });
const send = async (type: string, payload: Record<string, unknown>) => {
  const res = await fetch(p.webhook_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-example-token': TOKEN },
    body: JSON.stringify({ type, payload }),
  });
  if (res.status !== 202) throw new Error(`webhook answered ${res.status}`);
};

t.test('replay and allow lists in the browser', async (t) => {
  await send('alarm', { name: 'one' });
  await send('thing_happened', { name: 'two' });
  await send('thing_happened', { name: 'three' });
  await old.waitFor(3);
  // Today's Russian template for thing_happened, saved after the events.
  const now = new Date().toISOString();
  await svc.service.core.db.run(
    'INSERT INTO templates (id, user_id, event_type, locale, title, body, created_at, updated_at) ' +
      'VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    [newId(), svc.admin.id, 'thing_happened', 'ru', 'Сегодня: {{name}}', 'по новому шаблону', now, now],
  );

  await step('login', async () => {
    await b.logIn(svc.url, svc.admin.email, 'correct horse battery');
  });

  await step('choose two events', async () => {
    await page.goto(`${svc.url}/#/events`);
    await until(async () => (await page.getByTestId('event-row').count()) === 3, 'three events');
    t.ok(await page.getByTestId('replay-open').isDisabled(), 'nothing chosen: replay is off');
    await page.getByRole('checkbox', { name: 'Choose the event “ALARM one”' }).check();
    await page.getByRole('checkbox', { name: 'Choose the event “Thing: two”' }).check();
    t.equal((await page.getByTestId('replay-count').textContent())?.trim(), '2 events chosen');
  });

  await step('preview', async () => {
    await page.getByTestId('replay-open').click();
    const dialog = page.getByTestId('replay-dialog');
    await dialog.getByRole('checkbox', { name: /New sink/ }).check();
    await dialog.getByRole('button', { name: 'Preview' }).click();
    await dialog.getByText('2 events will be replayed.').waitFor();
    await dialog.getByText('As New sink gets them (Russian)').waitFor();
    const messages = dialog.getByTestId('replay-message');
    t.equal(await messages.count(), 2);
    t.match(await messages.nth(0).textContent(), /ТРЕВОГА one.*тревога/s, "the oldest first, in the target's language");
    t.match(await messages.nth(1).textContent(), /Сегодня: two.*по новому шаблону/s, "with today's template");
    // The preview answered without writing a delivery to the chosen target, so nothing can reach it.
    const written = await svc.service.core.db.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM deliveries WHERE target_id = ?',
      [tNew.id],
    );
    t.equal(Number(written!.n), 0, 'a preview writes no delivery');
    t.equal(fresh.received.length, 0, 'a preview sends nothing');
  });

  await step('replay', async () => {
    const dialog = page.getByTestId('replay-dialog');
    await dialog.getByRole('button', { name: 'Replay' }).click();
    await dialog.getByRole('button', { name: 'Really replay 2 events? Targets: 1.' }).click();
    await page.getByText('2 deliveries are queued.').waitFor();
    await fresh.waitFor(2);
    // Settled: every delivery recorded as sent (after its sink answered), so a duplicate would be here by now.
    t.ok(
      (await settled(svc)).every((d) => d.status === 'sent'),
      'every delivery sent',
    );
    t.equal(fresh.received.length, 2, 'the sink got each replayed event once');
    t.same(fresh.received.map((x) => x.body.title).sort(), ['Сегодня: two', 'ТРЕВОГА one']);
    t.equal(old.received.length, 3, 'the old target got nothing more');
    const row = page.getByTestId('event-row').filter({ hasText: 'Thing: two' });
    await row.getByRole('button', { name: 'Show or hide details' }).click();
    await page
      .getByTestId('event-history')
      .getByText(/replayed the event to New sink/)
      .waitFor();
    t.match(
      await page.getByTestId('event-history').textContent(),
      new RegExp(`${svc.admin.email} replayed the event to New sink.*before: no delivery`, 's'),
    );
  });

  await step('allow list in the target form', async () => {
    await page.goto(`${svc.url}/#/targets`);
    const card = page.locator('.item-card').filter({ hasText: 'New sink' });
    await card.getByRole('button', { name: 'Edit' }).click();
    const allow = page.getByTestId('outbound-allow');
    await allow.getByText('Private addresses this instance may reach').waitFor();
    await allow.getByRole('button', { name: 'Add an address or host' }).click();
    await allow.getByLabel('Allowed address 1').fill('192.168.1.300');
    await allow.getByText('Enter an IP address, a range such as 192.168.1.0/24, or a host name.').waitFor();
    // Every write of this target the page sends, in order: the refused save must add none before the good one.
    const writes: { method: string; body: string | null }[] = [];
    const onRequest = (r: import('playwright-core').Request) => {
      if (r.method() !== 'GET' && new URL(r.url()).pathname === `/api/targets/${tNew.id}`)
        writes.push({ method: r.method(), body: r.postData() });
    };
    page.on('request', onRequest);
    await page.getByRole('button', { name: 'Save' }).click();
    await allow.getByText('Enter an IP address, a range such as 192.168.1.0/24, or a host name.').waitFor();
    t.ok(await allow.isVisible(), 'the refused save leaves the form open');
    await allow.getByLabel('Allowed address 1').fill('192.168.1.10');
    await allow.getByRole('button', { name: 'Add an address or host' }).click();
    await allow.getByLabel('Allowed address 2').fill('NAS.lan');
    await page.getByRole('button', { name: 'Save' }).click();
    await allow.waitFor({ state: 'detached' });
    page.off('request', onRequest);
    // Settled: the good save came back (the form closed), and the page sends its requests in order,
    // so a write from the refused save would be listed before it.
    t.equal(writes.length, 1, 'a wrong entry is not sent: the only write is the good save');
    t.same(JSON.parse(writes[0]?.body ?? '{}').outbound_allow, ['192.168.1.10', 'NAS.lan'], 'as typed');
    const saved = (await svc.request('GET', `/api/targets/${tNew.id}`, { token })).body.outbound_allow;
    t.same(saved, ['192.168.1.10', 'nas.lan'], 'the list is saved');
    await card.getByRole('button', { name: 'Edit' }).click();
    t.equal(
      await page.getByTestId('outbound-allow').getByLabel('Allowed address 2').inputValue(),
      'nas.lan',
      'and shown again in the form',
    );
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  t.same(b.problems, [], 'no console errors or missing strings');
});
