/**
 * The web client in a real Chromium against the real service on loopback: first-run setup,
 * login, the relay set up through the forms (provider, target with a test send, tracker linked
 * to it), a webhook seen in the event log, a streamed chat reply (and a stopped one), a quota
 * reached and shown in the chat header, a report downloaded, and the switch to Russian.
 */
import fs from 'node:fs';
import t from 'tap';
import { startFakeOpenAI } from '../fakes/openai.ts';
import { startService, startSink } from '../helpers/service.ts';
import { ensureBuilt, openBrowser, until } from './browser.ts';

ensureBuilt();

const ADMIN = { email: 'admin@example.test', password: 'correct horse battery' };
const TOKEN = 'example-token-123';

const ai = await startFakeOpenAI({ apiKey: 'test-key' });
const sink = await startSink();
const svc = await startService(
  { AI_BASE_URL: ai.baseUrl, AI_API_KEY: 'test-key', SERVICE_LOG_LEVEL: 'WARNING', SERVICE_SUPERVISED: 'false' },
  { setup: false },
);
const b = await openBrowser();
const { page } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
  await sink.close();
  await ai.close();
});

// Not the browser's nav(): the phone part of this file opens the drawer itself.
const nav = async (name: string) => {
  await page.getByRole('navigation').getByRole('link', { name, exact: true }).click();
  await page.locator('#page-title').waitFor();
};

async function login(): Promise<void> {
  await page.getByLabel('Email').fill(ADMIN.email);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Log in' }).click();
}

/** Runs one step; on failure saves a screenshot named after it, then rethrows. */
async function step(name: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    await b.shot(`failed-${name}`);
    throw err;
  }
}

t.test('the web client end to end', async (t) => {
  let webhookUrl = '';

  await step('setup', async () => {
    await page.goto(svc.url);
    await page.getByRole('heading', { name: 'Welcome to Herald' }).waitFor();
    await b.shot('setup');
    await page.getByLabel('Administrator email').fill(ADMIN.email);
    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await page.getByLabel('Repeat the password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Create administrator' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    t.equal((await svc.request('GET', '/api/setup')).body.needs_setup, false, 'the administrator exists');
  });

  await step('logout-login', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').waitFor();
    t.match(await page.getByRole('alert').textContent(), /wrong/i, 'a failed login says why');
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await b.shot('overview');
  });

  await step('provider', async () => {
    await nav('Providers');
    await page.getByRole('button', { name: 'Add provider' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByTestId('provider-kind').selectOption('example');
    await dialog.getByTestId('provider-name').fill('Example source');
    await dialog.getByTestId('cfg-shared_token').fill(TOKEN);
    t.equal(await dialog.getByTestId('cfg-label').inputValue(), 'example', 'schema defaults fill the form');
    await b.shot('provider-form');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    const card = page.locator('.item-card', { hasText: 'Example source' });
    webhookUrl = await card.getByTestId('copy-value').inputValue();
    t.match(webhookUrl, /\/api\/hooks\/[\w-]+$/, 'the card shows the webhook URL to copy');
    await card.getByRole('button', { name: 'Edit' }).click();
    t.equal(
      await page.getByRole('dialog').getByTestId('cfg-shared_token').getAttribute('placeholder'),
      '********',
      'a stored secret shows as masked',
    );
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await b.shot('providers');
  });

  await step('target', async () => {
    await nav('Targets');
    await page.getByRole('button', { name: 'Add target' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByTestId('target-name').fill('Recorder');
    await dialog.getByTestId('cfg-url').fill(sink.url);
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    const card = page.locator('.item-card', { hasText: 'Recorder' });
    await card.getByRole('button', { name: 'Send test' }).click();
    await card.getByText('The test message was delivered.').waitFor();
    t.equal(sink.received.length, 1, 'the test message reached the target');
    await b.shot('targets');
  });

  await step('tracker', async () => {
    await nav('Trackers');
    await page.getByRole('button', { name: 'Add tracker' }).click();
    const dialog = page.getByRole('dialog');
    t.equal(
      await dialog.getByTestId('tracker-provider').locator('option:checked').textContent(),
      'Example source',
      'the new provider is preselected',
    );
    await dialog.getByTestId('tracker-name').fill('Example tracker');
    await dialog.getByTestId('event-stale_thing').uncheck();
    // Quiet hours that are not now, in UTC, so the webhook below is delivered at once.
    const h = (new Date().getUTCHours() + 6) % 24;
    await dialog.getByTestId('quiet-toggle').check();
    await dialog.getByLabel('From', { exact: true }).fill(`${String(h).padStart(2, '0')}:00`);
    await dialog.getByLabel('Until', { exact: true }).fill(`${String((h + 2) % 24).padStart(2, '0')}:00`);
    await dialog.getByTestId('quiet-timezone').selectOption('UTC');
    await dialog.getByLabel('Quiet-hours policy for “alarm”').selectOption('send');
    await dialog.getByTestId('link-Recorder').check();
    await b.shot('tracker-form');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    const row = page.getByRole('row', { name: /Example tracker/ });
    t.match(await row.textContent(), /Recorder/, 'the tracker is linked to the target');
    t.match(await row.textContent(), /UTC/, 'the quiet hours show with their time zone');
    const tracker = (await svc.request('GET', '/api/trackers', { token: await adminToken() })).body.trackers.find(
      (x: { name: string }) => x.name === 'Example tracker',
    );
    t.same(
      tracker.event_types,
      { thing_happened: true, alarm: true, stale_thing: false },
      'event types saved as chosen',
    );
    t.same(tracker.quiet_policies, { alarm: 'send' }, 'the per-type quiet policy is saved');
    t.equal(tracker.target_ids.length, 1, 'one link saved');
    await b.shot('trackers');
  });

  await step('webhook-event', async () => {
    const res = await fetch(webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-example-token': TOKEN },
      body: JSON.stringify({ type: 'thing_happened', payload: { name: 'Front door' }, note: 'opened' }),
    });
    t.equal(res.status, 202, 'the webhook is accepted');
    await sink.waitFor(2);
    t.equal(sink.received.length, 2, 'the event reached the target');
    await nav('Event log');
    const row = page.getByTestId('event-row').filter({ hasText: 'thing_happened' });
    await until(async () => {
      if ((await row.count()) && /Dispatched/.test((await row.first().textContent()) ?? '')) return true;
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.waitForTimeout(250);
      return false;
    }, 'the dispatched event in the log');
    await row.first().getByRole('button', { name: 'Show or hide details' }).click();
    const details = page.locator('.details-row');
    await details.getByText('Front door').first().waitFor();
    t.match(await details.textContent(), /Recorder.*Sent/s, 'the details show the delivery to the target');
    await page.getByTestId('status-filter').selectOption('failed');
    await page.getByText('No events yet.').waitFor();
    await page.getByTestId('status-filter').selectOption('');
    await row.first().waitFor();
    await b.shot('events');
  });

  await step('session-expiry', async () => {
    // A 401 from any call sends the user to log in, and back to the same page afterwards.
    // (After a reload the page holds no token of its own: the cookie is the session.)
    await page.reload();
    await page.getByRole('heading', { name: 'Event log' }).waitFor();
    await b.context.clearCookies();
    await page.evaluate(() => {
      location.hash = '#/targets';
    });
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    t.match(page.url(), /#\/login\?next=%2Ftargets/, 'the login remembers the page');
    await login();
    await page.getByRole('heading', { name: 'Targets' }).waitFor();
  });

  await step('skill-context', async () => {
    await nav('Skills');
    await page.getByRole('button', { name: 'Add skill' }).click();
    await page.getByRole('dialog').getByLabel('Name').fill('Brief answers');
    await page.getByRole('dialog').getByLabel('Instructions').fill('Answer in one sentence.');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.locator('.item-card', { hasText: 'Brief answers' }).waitFor();
    await nav('Primary context');
    await page.getByTestId('context-text').fill('You help a household keep track of things.');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Version 1').waitFor();
    t.pass('the primary context shows its version');
  });

  await step('chat-stream', async () => {
    await nav('Chats');
    await page.getByLabel('Title of the new chat').fill('Scratch');
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await page.getByRole('heading', { name: 'Scratch' }).waitFor();
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('dialog').getByRole('textbox').fill('First chat');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'First chat' }).waitFor();
    await page.getByRole('link', { name: /First chat/ }).waitFor();
    await page.getByTestId('skill-picker').selectOption({ label: 'Brief answers' });
    const chatPath = page.url().split('#')[1];
    await until(
      async () => (await svc.request('GET', `/api/v1${chatPath}`, { token: await adminToken() })).body.skill_id,
      'the skill bound to the chat',
    );
    // Two pieces, then the rest once the test has seen the partial reply (with all eight 120 ms apart, a loaded machine
    // could show the reply complete before the test looked).
    let resume!: () => void;
    ai.next({
      text: 'Hello **friend**, this reply arrives in pieces as it is written.',
      chunks: 8,
      hangAfter: 2,
      resumeOn: new Promise<void>((r) => {
        resume = r;
      }),
    });
    await page.getByLabel('Message', { exact: true }).fill('Hello there');
    await page.keyboard.press('Enter');
    const reply = page.getByTestId('msg-assistant').last();
    // Part of the text is on screen while the rest is still coming.
    await until(
      async () =>
        (await reply.getAttribute('data-status')) === 'streaming' &&
        ((await reply.textContent()) ?? '').includes('Hello'),
      'a partial reply',
    );
    t.ok(await page.getByRole('button', { name: 'Stop' }).isVisible(), 'Stop is offered while streaming');
    t.notOk(((await reply.textContent()) ?? '').includes('as it is written'), 'the reply is not complete yet');
    resume();
    await until(async () => (await reply.getAttribute('data-status')) === 'complete', 'the finished reply');
    t.equal(await reply.locator('.md strong').textContent(), 'friend', 'markdown is rendered');
    await until(
      async () => /1 \/ 100/.test((await page.getByTestId('quota-messages').textContent()) ?? ''),
      'the quota refreshed after the reply',
    );
    await b.shot('chat');

    // Model output is untrusted: HTML in it is sanitized.
    await page
      .getByLabel('Message', { exact: true })
      .fill('<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>');
    await page.keyboard.press('Enter');
    await until(
      async () =>
        (await page.getByTestId('msg-assistant').count()) === 2 &&
        (await page.getByTestId('msg-assistant').last().getAttribute('data-status')) === 'complete',
      'the echoed reply',
    );
    t.equal(await page.locator('.md img, .md script, .md [onerror]').count(), 0, 'no injected elements');
    t.match(
      await page.getByTestId('msg-assistant').last().locator('.md').textContent(),
      /<img src=x onerror=/,
      'raw HTML from the model is shown as text',
    );
    t.equal(
      await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned),
      undefined,
      'nothing injected ran',
    );

    // Stop aborts the stream; the reply is kept and marked interrupted.
    ai.next({
      text: 'A very long answer that will not be finished because the user stops it early on.',
      chunks: 30,
      // Its first five pieces ('A very long'), then nothing until the user stops it (with all thirty 150 ms apart, a
      // loaded machine could finish the reply before the click).
      hangAfter: 5,
    });
    await page.getByLabel('Message', { exact: true }).fill('Tell me everything');
    await page.keyboard.press('Enter');
    const long = page.getByTestId('msg-assistant').last();
    await until(async () => ((await long.textContent()) ?? '').includes('very long'), 'the start of the long reply');
    await page.getByRole('button', { name: 'Stop' }).click();
    await long.getByText('Interrupted').waitFor();
    const chatId = page.url().split('/').pop()!;
    const saved = await until(async () => {
      const r = await svc.request('GET', `/api/v1/chats/${chatId}/messages`, { token: await adminToken() });
      return r.body.messages.find((m: { status: string }) => m.status === 'interrupted');
    }, 'the interrupted reply saved by the service');
    t.ok(saved.content.startsWith('A very long'), 'the partial reply was saved');
  });

  await step('quota', async () => {
    await nav('Users');
    await page.getByTestId('user-row').filter({ hasText: ADMIN.email }).getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('dialog').getByTestId('user-messages').fill('3');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await b.shot('users');
    await nav('Chats');
    await page.getByRole('link', { name: /First chat/ }).click();
    const meter = page.getByTestId('quota-messages');
    await until(async () => (await meter.getAttribute('data-reached')) === 'true', 'the message limit highlighted');
    t.match(await meter.getAttribute('class'), /reached/, 'the reached limit is highlighted');
    t.match(await meter.textContent(), /3 \/ 3.*Limit reached/s, 'usage against the limit');
    t.match(
      await page.getByTestId('send-blocked').textContent(),
      /message limit \(3\) is reached/,
      'the reason is shown',
    );
    t.ok(await page.getByRole('button', { name: 'Send' }).isDisabled(), 'sending is disabled');
    t.ok(await page.getByLabel('Message', { exact: true }).isDisabled(), 'the composer is disabled');
    await b.shot('chat-quota');
    await page.getByRole('button', { name: 'Archive' }).click();
    await page.getByRole('button', { name: 'Restore' }).waitFor();
    await page.getByRole('tab', { name: 'Archived' }).click();
    await page.getByRole('link', { name: /First chat/ }).waitFor();
    await page.getByRole('tab', { name: 'Active' }).click();
    await page.getByText('No chats yet.', { exact: false }).waitFor();
    t.pass('an archived chat moves to the archived list');
  });

  await step('admin-pages', async () => {
    await nav('Usage');
    t.match(
      await page.getByRole('row', { name: new RegExp(ADMIN.email) }).textContent(),
      /3/,
      'usage shows the messages sent today',
    );
    await nav('Self-monitoring');
    await page.getByLabel('Threshold').first().fill('7');
    await page.getByRole('button', { name: 'Save' }).click();
    await until(
      async () =>
        (await svc.request('GET', '/api/self-monitoring', { token: await adminToken() })).body
          .poll_failure_threshold === 7,
      'the threshold saved',
    );
    await nav('Settings');
    await page.getByLabel('AI messages per day').fill('50');
    await page
      .locator('form', { has: page.getByLabel('AI messages per day') })
      .getByRole('button', { name: 'Save' })
      .click();
    await until(
      async () =>
        (await svc.request('GET', '/api/v1/admin/settings', { token: await adminToken() })).body
          .default_max_ai_messages_per_day === 50,
      'the setting saved',
    );
  });

  await step('documents-memory', async () => {
    await nav('Memory');
    await page.getByLabel('Entry', { exact: true }).fill('Blood pressure 120/80 in the morning.');
    await page.getByLabel('Category').fill('blood pressure');
    await page.getByRole('button', { name: 'Add entry' }).click();
    await page.locator('.entry', { hasText: '120/80' }).waitFor();
    await nav('Documents');
    await page.getByLabel('File', { exact: true }).setInputFiles({
      name: 'notes.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from('# Notes\n\nSlept well all week.\n'),
    });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('row', { name: /notes\.md/ }).waitFor();
    await page.getByRole('searchbox').fill('slept');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('Slept well all week.').waitFor();
    t.pass('an uploaded document is listed and searchable');
  });

  await step('backups', async () => {
    await nav('Backups');
    await page.getByRole('button', { name: 'Create backup on the server' }).click();
    const row = page.getByRole('row', { name: /backup-.*\.json/ });
    await row.waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), row.getByTestId('backup-download').click()]);
    const file = await download.path();
    const envelope = JSON.parse(fs.readFileSync(file, 'utf8'));
    t.ok(envelope.format_version, 'the downloaded backup is an envelope');
    t.notMatch(fs.readFileSync(file, 'utf8'), new RegExp(TOKEN), 'no secrets in a default backup');
    await page.getByLabel('Create backups on a schedule').check();
    await page.getByLabel('Every (hours)').fill('12');
    await page.locator('form', { hasText: 'Every (hours)' }).getByRole('button', { name: 'Save' }).click();
    await until(
      async () =>
        (await svc.request('GET', '/api/backup/scheduled', { token: await adminToken() })).body
          .backup_scheduled_interval_hours === '12',
      'the schedule saved',
    );
    await page.getByTestId('restore-file').setInputFiles(file);
    await page.getByLabel('When a record already exists').selectOption('skip');
    await page.getByRole('button', { name: 'Check and stage' }).click();
    const staged = page.getByTestId('staged-restore');
    await staged.waitFor();
    t.match(await staged.textContent(), /providers/, 'the staged restore shows what it would change');
    b.allow(/status of 409.*\/api\/backup\/apply-restart$/);
    await page.getByRole('button', { name: 'Apply and restart' }).click();
    // The page asks first; confirming sends the request.
    await page
      .getByRole('dialog', { name: 'Restart and restore?' })
      .getByRole('button', { name: 'Restart and restore' })
      .click();
    await page
      .getByRole('alert')
      .filter({ hasText: /supervisor/ })
      .waitFor();
    t.pass('apply-restart passed the same-origin check and said why it cannot restart here');
    await page.getByRole('button', { name: 'Cancel restore' }).click();
    await page.getByRole('button', { name: 'Check and stage' }).waitFor();
    t.equal(
      (await svc.request('GET', '/api/backup/pending-restore', { token: await adminToken() })).status,
      204,
      'the staged restore is gone',
    );
    await b.shot('backups');
  });

  await step('report', async () => {
    await nav('Reports');
    await page.getByLabel('Title').fill('E2E report');
    await page.getByRole('button', { name: 'Generate PDF' }).click();
    const row = page.getByTestId('report-row').filter({ hasText: 'E2E report' });
    await row.waitFor({ timeout: 15000 });
    const [download] = await Promise.all([page.waitForEvent('download'), row.getByTestId('report-download').click()]);
    t.equal(download.suggestedFilename(), 'E2E report.pdf', 'the download carries the title');
    const file = await download.path();
    t.equal(fs.readFileSync(file).subarray(0, 5).toString(), '%PDF-', 'the download is a PDF');
    await b.shot('reports');
  });

  await step('russian', async () => {
    await page.getByTestId('language').selectOption('ru');
    await page.getByRole('heading', { name: 'Отчёты' }).waitFor();
    t.equal(await page.locator('html').getAttribute('lang'), 'ru', 'the document language follows');
    t.ok(
      await page.getByRole('navigation').getByRole('link', { name: 'Журнал событий' }).isVisible(),
      'the navigation is in Russian',
    );
    t.ok(await page.getByRole('button', { name: 'Создать PDF' }).isVisible(), 'the page is in Russian');
    await page.reload();
    await page.getByRole('heading', { name: 'Отчёты' }).waitFor();
    t.pass('Russian is remembered after a reload');
    await nav('Журнал событий');
    await page.getByTestId('event-row').first().getByText('Отправлено').waitFor();
    await b.shot('events-ru');
  });

  await step('phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const menu = page.getByRole('button', { name: 'Меню' });
    t.ok(await menu.isVisible(), 'a menu button on a small screen');
    t.notOk(
      await page.getByRole('navigation').getByRole('link', { name: 'Получатели' }).isVisible(),
      'the navigation is folded away',
    );
    await menu.click();
    await page.getByRole('navigation').getByRole('link', { name: 'Получатели' }).click();
    await page.getByRole('heading', { name: 'Получатели' }).waitFor();
    // The drawer slides away with a transition: wait for it to be hidden rather than sampling once.
    const closed = await page
      .getByRole('navigation')
      .getByRole('link', { name: 'Получатели' })
      .waitFor({ state: 'hidden', timeout: 3000 })
      .then(
        () => true,
        () => false,
      );
    t.ok(closed, 'the navigation closes after choosing a page');
    await b.shot('phone-targets');
    await page.emulateMedia({ colorScheme: 'dark' });
    await menu.click();
    await nav('Чаты');
    await page.getByRole('tab', { name: 'В архиве' }).click();
    await page.getByRole('link', { name: /First chat/ }).click();
    await page.getByTestId('quota-messages').waitFor();
    await b.shot('phone-chat-dark');
    await page.setViewportSize({ width: 1280, height: 860 });
    await b.shot('chat-dark');
  });

  t.same(b.problems, [], 'no console errors');
});

let token = '';
async function adminToken(): Promise<string> {
  if (token) return token;
  const r = await svc.request('POST', '/api/auth/login', { body: ADMIN });
  token = r.body.access_token;
  return token;
}
