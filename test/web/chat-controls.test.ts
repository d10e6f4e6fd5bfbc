/**
 * The chat controls in a real Chromium against the real service and the fake model: regenerate
 * and flip between alternatives, edit and resend, a failed reply (model 500) then Retry, copy a
 * message and a code block (read back from the clipboard), highlighted code that cannot inject
 * markup, choosing a model (the fake model receives it), a report's download card after a reload
 * (gone once the report is deleted), and an archived chat that is read-only until unarchived.
 */
import t from 'tap';
import { startFakeOpenAI } from '../fakes/openai.ts';
import { startService } from '../helpers/service.ts';
import { ensureBuilt, openBrowser } from './browser.ts';

ensureBuilt();

const ai = await startFakeOpenAI({ apiKey: 'test-key' });
const svc = await startService({
  AI_BASE_URL: ai.baseUrl,
  AI_API_KEY: 'test-key',
  AI_MODEL: 'fake-small',
  SERVICE_LOG_LEVEL: 'WARNING',
  SERVICE_SUPERVISED: 'false',
});
const b = await openBrowser(undefined, { shots: 'failed-controls' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
  await ai.close();
});

const email = 'controls@example.test';
const password = 'user password 1';
const created = await svc.request('POST', '/api/v1/admin/users', { token: svc.admin.token, body: { email, password } });
if (created.status !== 201) throw new Error(`user creation failed: ${created.text}`);
const token = (await svc.request('POST', '/api/auth/login', { body: { email, password } })).body.access_token as string;

const assistant = () => page.getByTestId('msg-assistant');
const lastReply = () => assistant().last();
const composer = () => page.locator('#composer');
async function sendText(text: string): Promise<void> {
  await composer().fill(text);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
}
/**
 * Waits until the last reply is no longer streaming and shows `text`; `ms` longer than the page's
 * default for a reply that draws a PDF (a worker thread of its own, seconds on a busy machine).
 */
async function replyShows(text: string | RegExp, ms?: number): Promise<void> {
  await lastReply().and(page.locator('[data-status="complete"]')).filter({ hasText: text }).waitFor({ timeout: ms });
}

t.test('chat controls in the browser', async (t) => {
  const chat = (await svc.request('POST', '/api/v1/chats', { token, body: { title: 'Controls' } })).body.id as string;

  await step('login', async () => {
    await page.goto(svc.url);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('navigation').waitFor();
    await page.goto(`${svc.url}/#/chats/${chat}`);
    await composer().waitFor();
  });

  await step('regenerate-and-flip', async () => {
    await sendText('hello');
    await replyShows('Echo: hello');
    ai.next({ text: 'A second take' });
    await lastReply().getByTestId('regenerate').click();
    await replyShows('A second take');
    t.equal(await lastReply().getByTestId('alt-position').textContent(), '2 / 2', 'the new reply is the second of two');
    await lastReply().getByTestId('alt-previous').click();
    await replyShows('Echo: hello');
    t.equal(await lastReply().getByTestId('alt-position').textContent(), '1 / 2', 'flipped back to the first reply');
    t.equal(await page.getByTestId('msg-user').count(), 1, 'one question');
  });

  await step('edit-and-resend', async () => {
    await page.getByTestId('msg-user').last().getByTestId('edit').click();
    await page.getByTestId('edit-input').fill('hello, edited');
    await page.getByTestId('edit-send').click();
    await replyShows('Echo: hello, edited');
    const question = page.getByTestId('msg-user').last();
    t.match(await question.textContent(), /hello, edited/);
    t.equal(
      await question.getByTestId('alt-position').textContent(),
      '2 / 2',
      'the original question is kept as an alternative',
    );
    t.equal(ai.calls.at(-1)!.body.messages.at(-1).content, 'hello, edited', 'the model answered the edited question');
  });

  await step('failure-and-retry', async () => {
    b.allow(/status of 502/);
    ai.next({ failStatus: 500 });
    await sendText('please fail');
    const failed = page.getByTestId('reply-failed');
    await failed.waitFor();
    t.match(
      await failed.textContent(),
      /The AI model failed to answer/,
      "the failure is said in the user's language, from its code",
    );
    t.equal(await lastReply().locator('.msg-body').count(), 0, 'no empty bubble');
    await failed.getByTestId('retry').click();
    await replyShows('Echo: please fail');
    t.equal(await page.getByTestId('reply-failed').count(), 0, 'the failure is replaced');
    t.equal(
      await page.getByTestId('msg-user').filter({ hasText: 'please fail' }).count(),
      1,
      'the question is not duplicated',
    );
  });

  await step('copy-and-highlight', async () => {
    await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.url });
    const code = 'const answer = 42;\n</code><script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">';
    ai.next({ text: `Here it is:\n\n\`\`\`javascript\n${code}\n\`\`\`\n` });
    await sendText('some code please');
    await replyShows('Here it is');
    const block = lastReply().locator('pre code');
    await lastReply().locator('pre code.hljs .hljs-keyword').first().waitFor();
    t.equal(
      await block.getAttribute('class').then((c) => /language-javascript/.test(c ?? '')),
      true,
      'the language is kept for the highlighter',
    );
    t.equal(
      await page.evaluate(() => (window as unknown as { __xss?: number }).__xss),
      undefined,
      'nothing in the code block ran',
    );
    t.equal(await lastReply().locator('.md script, .md img').count(), 0, 'no markup from the reply');
    await lastReply().getByTestId('copy-code').click();
    await page.getByText('Copied').first().waitFor();
    t.equal(await page.evaluate(() => navigator.clipboard.readText()), code, 'the code block is copied exactly');
    await page.getByTestId('msg-user').last().getByTestId('copy-message').click();
    t.equal(await page.evaluate(() => navigator.clipboard.readText()), 'some code please', 'the message is copied');
  });

  await step('model', async () => {
    const picker = page.getByTestId('model-picker');
    await picker.waitFor();
    t.same(
      await picker.locator('option').allTextContents(),
      ['fake-small (default)', 'fake-large'],
      'the models the endpoint lists',
    );
    const saved = page.waitForResponse(
      (r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/v1/chats/${chat}`),
    );
    await picker.selectOption('fake-large');
    t.equal((await saved).status(), 200);
    await sendText('which model');
    await replyShows('Echo: which model');
    t.equal(ai.calls.at(-1)!.body.model, 'fake-large', 'the fake model received the chosen model');
    t.equal(await lastReply().getByTestId('msg-model').textContent(), 'fake-large');
  });

  await step('report-card', async () => {
    await sendText('make me a report');
    await replyShows('Your report is ready', 30_000);
    await page.reload();
    const card = page.getByTestId('report-card');
    await card.waitFor();
    t.match(await card.textContent(), /Health report/);
    t.equal(
      await lastReply().locator('.md a[href*="/api/v1/reports/"]').count(),
      1,
      'the link the model wrote works while the report exists',
    );
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      card.getByTestId('report-card-download').click(),
    ]);
    t.equal(download.suggestedFilename(), 'Health report.pdf', 'the card downloads the report after a reload');
    const reportId = (await svc.request('GET', '/api/v1/reports', { token })).body.reports[0].id;
    t.equal((await svc.request('DELETE', `/api/v1/reports/${reportId}`, { token })).status, 204);
    await page.reload();
    await replyShows('Your report is ready');
    t.equal(await page.getByTestId('report-card').count(), 0, 'a deleted report leaves no card');
    t.equal(
      await lastReply().locator('.md a[href*="/api/v1/reports/"]').count(),
      0,
      'and the link in the text becomes plain text',
    );
    t.match(await lastReply().textContent(), /Health report/, 'its words stay');
  });

  await step('archived', async () => {
    await page.getByRole('button', { name: 'Archive', exact: true }).click();
    await page.getByTestId('archived-note').waitFor();
    t.equal(await composer().count(), 0, 'no composer in an archived chat');
    t.equal(await page.getByTestId('regenerate').count(), 0, 'no regenerate in an archived chat');
    t.equal(await page.getByTestId('edit').count(), 0, 'no edit in an archived chat');
    const refused = await svc.request('POST', `/api/v1/chats/${chat}/messages`, { token, body: { content: 'sneaky' } });
    t.equal(refused.status, 409, 'the service refuses too');
    await page.getByTestId('unarchive').click();
    await composer().waitFor();
    t.equal(await page.getByTestId('archived-note').count(), 0);
  });

  await step('admin-models-and-usage', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Email').fill(svc.admin.email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('navigation').waitFor();
    await page.goto(`${svc.url}/#/admin/settings`);
    const form = page.getByTestId('models-settings');
    await form.getByTestId('models-effective').waitFor();
    t.match(
      await form.getByTestId('models-effective').textContent(),
      /fake-small, fake-large/,
      'the models users can choose now',
    );
    await form.getByTestId('models-allowed').fill('fake-large\nnot-served');
    await form.getByTestId('models-default').fill('fake-large');
    await form.getByRole('button', { name: 'Save' }).click();
    await form
      .getByTestId('models-effective')
      .filter({ hasText: /: fake-large$/ })
      .waitFor();
    t.same(
      (await svc.request('GET', '/api/v1/models', { token })).body,
      { models: [{ id: 'fake-large' }], default: 'fake-large' },
      'saved: the list and the default users get',
    );
    await page.goto(`${svc.url}/#/admin/usage`);
    const models = page.getByTestId('usage-models');
    await models.waitFor();
    t.match(await models.textContent(), /fake-large/, 'usage per model');
    t.match(await models.textContent(), /fake-small/);
  });

  t.same(b.problems, [], 'no console errors');
});
