/**
 * The administrators' "Outbound access" page in a real Chromium: the administrator opens it from
 * the navigation, finds another user's target among every user's rows (owner and server shown),
 * adds an allowed host to it, saves, and the service has the list on that user's target.
 */
import t from 'tap';
import { startService, startSink } from '../helpers/service.ts';
import { ensureBuilt, openBrowser } from './browser.ts';

ensureBuilt();

const sink = await startSink();
const svc = await startService({ SERVICE_LOG_LEVEL: 'WARNING', SERVICE_OUTBOUND_ALLOW_CIDRS: '' });
const b = await openBrowser(undefined, { shots: 'admin-outbound-failed' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
  await sink.close();
});

t.test("an administrator allows a host for another user's target", async (t) => {
  const carol = await svc.user('carol@example.com');
  const target = (
    await svc.request('POST', '/api/targets', {
      token: carol.token,
      body: {
        kind: 'recorder',
        name: 'Carol NAS',
        config: { url: `${sink.url}hook`, api_token: 'carol-secret-token-5e1' },
        locale: 'en',
      },
    })
  ).body;
  t.ok(target.id, 'carol has a target');

  await step('open the page', async () => {
    await b.logIn(svc.url, svc.admin.email, 'correct horse battery');
    await page.getByRole('navigation').getByRole('link', { name: 'Outbound access', exact: true }).click();
    await page.getByRole('heading', { name: 'Outbound access', level: 1 }).waitFor();
  });

  const card = page.locator(`[data-testid="outbound-row"][data-id="${target.id}"]`);
  await step("find carol's target", async () => {
    await card.waitFor();
    t.match(await card.textContent(), /Carol NAS[\s\S]*carol@example\.com/, 'the card names the target and its owner');
    t.match(
      await card.locator('code').first().textContent(),
      /^http:\/\/127\.0\.0\.1:\d+$/,
      'and the server, without the path',
    );
    t.notOk((await page.content()).includes('carol-secret-token-5e1'), 'no secret on the page');
  });

  await step('add an entry and save', async () => {
    await card.getByTestId('outbound-allow-add').click();
    await card.getByTestId('outbound-allow-entry').fill('127.0.0.1');
    await card.getByTestId('outbound-save').click();
    await card.getByTestId('outbound-save').waitFor({ state: 'detached' });
  });

  await page.setViewportSize({ width: 390, height: 844 });
  await b.shot('admin-outbound-phone');
  const saved = await svc.request('GET', `/api/targets/${target.id}`, { token: carol.token });
  t.same(saved.body.outbound_allow, ['127.0.0.1'], "the service has the list on carol's target");
  const sent = await svc.request('POST', `/api/targets/${target.id}/test`, { token: carol.token, body: {} });
  t.equal(sent.body.ok, true, `and carol's target now reaches the loopback sink (${sent.body.detail})`);
  t.same(b.problems, [], 'no console errors');
});
