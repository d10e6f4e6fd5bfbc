/**
 * Messages that follow the state in a real Chromium against the real service: a UPS (fake upsd)
 * on battery, then back on line, to a Matrix room (fake homeserver); the event log says the second
 * delivery edited the earlier message. The target form's "Update earlier messages" switch is on by
 * default and turning it off is saved.
 */
import t from 'tap';
import { startFakeNut } from '../../plugins/provider-nut/test/fakes/nut.ts';
import { FakeHomeserver } from '../../plugins/target-matrix/test/fakes/matrix.ts';
import { startService } from '../helpers/service.ts';
import { ensureBuilt, openBrowser } from './browser.ts';

ensureBuilt();

const ROOM = '!ops:example.org';
const MX_TOKEN = 'syt_aGVyYWxk_webUpdates_0001';
const hs = await new FakeHomeserver().start();
hs.addUser('@herald:example.org', MX_TOKEN, [ROOM]);
const nut = await startFakeNut({ ups: 'rack' });
const svc = await startService({
  SERVICE_LOG_LEVEL: 'WARNING',
  SERVICE_PLUGINS: '@herald/provider-bridge-self,@herald/provider-nut,@herald/target-matrix',
});
const b = await openBrowser(undefined, { shots: 'updates-failed' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
  await hs.close();
  await nut.close();
});
const token = svc.admin.token;

const target = (
  await svc.request('POST', '/api/targets', {
    token,
    body: {
      kind: 'matrix',
      name: 'Ops room',
      locale: 'en',
      config: { homeserver_url: hs.url, access_token: MX_TOKEN, room_id: ROOM },
    },
  })
).body;
const provider = (
  await svc.request('POST', '/api/providers', {
    token,
    body: {
      kind: 'nut',
      name: 'Rack UPS',
      enabled: false,
      config: { host: '127.0.0.1', port: nut.port, ups_name: 'rack' },
    },
  })
).body;
const tracker = (await svc.request('POST', '/api/trackers', { token, body: { provider_id: provider.id, name: 'UPS' } }))
  .body;
await svc.request('PUT', `/api/trackers/${tracker.id}/targets/${target.id}`, { token });
await svc.request('PATCH', `/api/providers/${provider.id}`, { token, body: { enabled: true } });
const poll = async (status: string) => {
  nut.vars['ups.status'] = status;
  await svc.service.core.plugins.pollOnce(provider.id);
  await (svc.service.core.services.get('relay') as { tick(): Promise<void> }).tick();
};

t.test('the event log marks an edited message; the target form switch is saved', async (t) => {
  await poll('OL');
  await poll('OB DISCHRG');
  await poll('OL CHRG');
  t.equal(hs.events.length, 2);
  t.equal(hs.events[1]!.content['m.relates_to']?.rel_type, 'm.replace', 'the second event edited the first');

  await step('login', async () => {
    await b.logIn(svc.url, svc.admin.email, 'correct horse battery');
  });

  await step('event log', async () => {
    await page.goto(`${svc.url}/#/events?event_type=ups_online`);
    await page
      .getByRole('row', { name: /power is back/ })
      .getByRole('button', { name: 'Show or hide details' })
      .click();
    const mark = page.getByTestId('send-mode').first();
    await mark.waitFor();
    t.equal((await mark.textContent())?.trim(), 'edited the earlier message');
    await b.shot('events-edited-message');
    await page.goto(`${svc.url}/#/events?event_type=ups_on_battery`);
    await page
      .getByRole('row', { name: /on battery/ })
      .getByRole('button', { name: 'Show or hide details' })
      .click();
    await page.getByTestId('delivery').first().waitFor();
    t.equal(await page.getByTestId('send-mode').count(), 0, 'a new message is not marked');
  });

  await step('target form', async () => {
    await page.goto(`${svc.url}/#/targets`);
    await page.locator('.item-card').filter({ hasText: 'Ops room' }).getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog');
    const toggle = dialog.getByRole('checkbox', { name: 'Update earlier messages' });
    t.ok(await toggle.isChecked(), 'on by default');
    await toggle.uncheck();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    t.equal((await svc.request('GET', `/api/targets/${target.id}`, { token })).body.update_messages, false, 'saved');
  });

  t.same(b.problems, [], 'no console errors');
});
