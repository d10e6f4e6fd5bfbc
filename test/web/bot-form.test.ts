/**
 * The bot form in a real Chromium sends the bot's typed create and change bodies: the name, the token
 * and the mode picked; on a change the token left empty is sent masked (kept by the service). The
 * service's answers are stood in for (no messaging service is reached from a test), the bodies are
 * what the page sent.
 */
import t from 'tap';
import { startService } from '../helpers/service.ts';
import { ensureBuilt, openBrowser } from './browser.ts';

ensureBuilt();

const svc = await startService({ SERVICE_LOG_LEVEL: 'WARNING' });
const b = await openBrowser(undefined, { shots: 'bot-form-failed' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
});

const bot = {
  id: '00000000-0000-4000-8000-000000000001',
  kind: 'telegram',
  name: 'Night shift',
  bot_id: '42',
  username: 'night_bot',
  mode: 'polling',
  status: 'running',
  status_detail: null,
  created_at: '2026-01-01T00:00:00.000Z',
};

t.test('the bot form sends typed bodies', async (t) => {
  const sent: { method: string; url: string; body: unknown }[] = [];
  await page.route('**/api/bots**', async (route) => {
    const req = route.request();
    if (req.method() === 'GET' && new URL(req.url()).pathname === '/api/bots')
      return route.fulfill({ json: { bots: sent.length ? [bot] : [] } });
    if (req.method() === 'POST' || req.method() === 'PATCH') {
      sent.push({ method: req.method(), url: new URL(req.url()).pathname, body: req.postDataJSON() });
      return route.fulfill({ status: req.method() === 'POST' ? 201 : 200, json: bot });
    }
    return route.fallback();
  });

  await step('add a bot', async () => {
    await b.logIn(svc.url, svc.admin.email, 'correct horse battery');
    await page.evaluate(() => {
      location.hash = '/bots';
    });
    await page.getByRole('button', { name: 'Add bot' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('Night shift');
    await dialog.getByLabel('Bot token').fill('123:abc');
    await dialog.locator('input[type="radio"]').nth(1).check();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
  });
  t.same(sent[0], {
    method: 'POST',
    url: '/api/bots',
    body: { name: 'Night shift', token: '123:abc', mode: 'webhook' },
  });

  await step('rename it, token left empty', async () => {
    await page.getByRole('button', { name: 'Edit' }).first().click();
    const dialog = page.getByRole('dialog');
    t.equal(await dialog.getByLabel('Name').inputValue(), 'Night shift', 'the form starts from the bot');
    await dialog.getByLabel('Name').fill('Day shift');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
  });
  t.same(sent[1], {
    method: 'PATCH',
    url: `/api/bots/${bot.id}`,
    body: { name: 'Day shift', mode: 'polling', token: '********' },
  });
  t.same(b.problems, [], 'no console errors');
});
