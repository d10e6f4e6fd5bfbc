/**
 * Pins, folders and attachments in a real Chromium against the real service and the fake model: a chat pinned from
 * its menu is listed under Pinned, one moved to a folder under that folder (collapsible); a Markdown file attached
 * with the paperclip's file input (or dropped on the composer) shows as a chip, is sent with the message (the chip
 * stays on it after a reload) and the fake model's document search reads its text; an unsupported or too large file
 * is refused with a toast in
 * the user's language (English and Russian).
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
  SERVICE_LOG_LEVEL: 'WARNING',
  SERVICE_SUPERVISED: 'false',
});
const b = await openBrowser(undefined, { shots: 'failed-attach' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
  await ai.close();
});

const email = 'attach@example.test';
const password = 'user password 1';
const created = await svc.request('POST', '/api/v1/admin/users', { token: svc.admin.token, body: { email, password } });
if (created.status !== 201) throw new Error(`user creation failed: ${created.text}`);
const token = (await svc.request('POST', '/api/auth/login', { body: { email, password } })).body.access_token as string;
const newChat = async (title: string) =>
  (await svc.request('POST', '/api/v1/chats', { token, body: { title } })).body.id as string;

t.test('pins, folders and attachments in the browser', async (t) => {
  const older = await newChat('Older chat');
  const chat = await newChat('Training');

  await step('login', async () => {
    await page.goto(svc.url);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('navigation').waitFor();
    await page.goto(`${svc.url}/#/chats/${older}`);
    await page.locator('#composer').waitFor();
  });

  await step('pin', async () => {
    await page.getByTestId('chat-pin').click();
    await page.getByTestId('chats-pinned').getByText('Older chat').waitFor();
    t.equal(await page.getByTestId('chat-pin').textContent(), 'Unpin', 'the menu offers to unpin it now');
    const order = await page.locator('.chat-groups .chat-item-title').allTextContents();
    t.match(order[0], /Older chat/, 'the pinned chat is listed first though it is older');
    t.equal((await svc.request('GET', `/api/v1/chats/${older}`, { token })).body.pinned, true);
  });

  await step('folder', async () => {
    await page.goto(`${svc.url}/#/chats/${chat}`);
    await page.getByTestId('chat-move').click();
    await page.getByTestId('folder-input').fill('Sport');
    await page.getByTestId('folder-save').click();
    const folder = page.locator('details.chat-folder[data-folder="Sport"]');
    await folder.getByText('Training').waitFor();
    t.equal(await folder.getAttribute('open'), '', 'the folder of the open chat is open');
    await folder.locator('summary').click();
    t.equal(await folder.getAttribute('open'), null, 'and folds');
    t.equal((await svc.request('GET', `/api/v1/chats/${chat}`, { token })).body.folder, 'Sport');
  });

  await step('attach-and-send', async () => {
    await page.getByTestId('attach-input').setInputFiles({
      name: 'plan.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from('# Plan\n\nRun 12 km on Sundays at an easy pace.\n'),
    });
    await page.getByTestId('attach-chip').filter({ hasText: 'plan.md' }).waitFor();
    ai.next({ toolCall: { name: 'search_documents', arguments: JSON.stringify({ query: 'Sundays' }), pieces: 2 } });
    await page.locator('#composer').fill('How far do I run?');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByTestId('msg-assistant').last().and(page.locator('[data-status="complete"]')).waitFor();
    t.equal(await page.getByTestId('attach-chip').count(), 0, 'the composer is empty again');
    const question = page.getByTestId('msg-user').last();
    await question.getByTestId('msg-doc').filter({ hasText: 'plan.md' }).waitFor();
    const first = ai.calls.at(-2)!.body;
    t.match(first.messages.at(-1).content, /plan\.md/, 'the model is told of the attached document');
    const tool = ai.calls
      .at(-1)!
      .body.messages.filter((m: any) => m.role === 'tool')
      .map((m: any) => m.content)
      .join('\n');
    t.match(tool, /Run 12 km on Sundays/, "the model's document search read the attached file's text");
    await page.reload();
    await page.getByTestId('msg-user').last().getByTestId('msg-doc').filter({ hasText: 'plan.md' }).waitFor();
    t.pass('the chip is still on the message after a reload');
  });

  await step('drop', async () => {
    const dt = await page.evaluateHandle(() => {
      const d = new DataTransfer();
      d.items.add(new File(['Dropped notes about sleep.'], 'dropped.txt', { type: 'text/plain' }));
      return d;
    });
    const form = page.locator('form.composer');
    await form.dispatchEvent('dragover', { dataTransfer: dt });
    t.match(await form.getAttribute('class'), /composer-drop/, 'the composer shows it takes the drop');
    await form.dispatchEvent('drop', { dataTransfer: dt });
    const chip = page.getByTestId('attach-chip').filter({ hasText: 'dropped.txt' });
    await chip.waitFor();
    t.notMatch(await form.getAttribute('class'), /composer-drop/);
    await chip.getByRole('button', { name: 'Remove dropped.txt' }).click();
    await chip.waitFor({ state: 'detached' });
    t.pass('a dropped file is attached, and can be removed before sending');
  });

  await step('refused-files', async () => {
    await page.getByTestId('attach-input').setInputFiles({
      name: 'photo.png',
      mimeType: 'image/png',
      buffer: Buffer.from([0x89, 0x50, 0x4e, 0x47]),
    });
    await page.locator('.toast').filter({ hasText: '"photo.png" cannot be attached' }).waitFor();
    await page.getByTestId('attach-input').setInputFiles({
      name: 'big.txt',
      mimeType: 'text/plain',
      buffer: Buffer.alloc(10 * 1024 * 1024 + 1, 'a'),
    });
    await page.locator('.toast').filter({ hasText: '"big.txt" is too large to attach: at most 10 MB.' }).waitFor();
    t.equal(await page.getByTestId('attach-chip').count(), 0, 'neither is attached');
    const docs = (await svc.request('GET', '/api/v1/documents', { token })).body.documents;
    t.same(
      docs.map((d: any) => d.filename),
      ['dropped.txt', 'plan.md'],
      'neither was uploaded',
    );
  });

  await step('russian', async () => {
    t.equal((await svc.request('PATCH', '/api/v1/users/me', { token, body: { locale: 'ru' } })).status, 200);
    await page.goto(`${svc.url}/#/chats/${chat}`);
    await page.reload();
    await page.locator('#composer').waitFor();
    await page.getByTestId('chats-pinned').getByText('Закреплённые').waitFor();
    await page.getByTestId('attach-input').setInputFiles({
      name: 'photo.png',
      mimeType: 'image/png',
      buffer: Buffer.from([0x89, 0x50, 0x4e, 0x47]),
    });
    await page.locator('.toast').filter({ hasText: 'Файл «photo.png» нельзя прикрепить' }).waitFor();
    t.same(b.problems, [], 'no console errors or failed requests');
  });
});
