/**
 * The assistant's memory in real Chromium against the fake model: a fact saved on the Memory page
 * with "Always include", a question whose reply searched memory (the compact tool line), the chat
 * titled after its first exchange, the sidebar search opening the chat at the message, and the
 * Markdown export downloaded.
 */
import fs from 'node:fs';
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
const b = await openBrowser(undefined, { shots: 'assistant-memory-failed' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
  await ai.close();
});

t.test('memory, tool lines, generated titles, search and export in the browser', async (t) => {
  await step('login', async () => {
    await page.goto(svc.url);
    await page.getByLabel('Email').fill(svc.admin.email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('navigation').waitFor();
  });

  await step('memory', async () => {
    await page.goto(`${svc.url}/#/memory`);
    await page.getByText('always sees the entries marked “Always include”').waitFor();
    await page.getByLabel('Entry').fill('Allergic to penicillin');
    await page.getByTestId('memory-always').check();
    await page.getByRole('button', { name: 'Add entry' }).click();
    const entry = page.locator('.entry').filter({ hasText: 'Allergic to penicillin' });
    await entry.getByText('Always included').waitFor();
    const saved = (await svc.request('GET', '/api/v1/memory', { token: svc.admin.token })).body.entries;
    t.match(saved, [{ content: 'Allergic to penicillin', always_include: true }], 'saved with always_include');
  });

  await step('ask', async () => {
    await page.goto(`${svc.url}/#/chats`);
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await page.locator('#page-title').filter({ hasText: 'New chat' }).waitFor();
    ai.next(
      { toolCall: { name: 'search_memory', arguments: JSON.stringify({ query: 'allergy' }) } },
      { text: 'You are allergic to penicillin.' },
      { text: 'Penicillin allergy' },
    );
    await page.locator('#composer').fill('What am I allergic to?');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const reply = page.getByTestId('msg-assistant').last();
    await reply
      .and(page.locator('[data-status="complete"]'))
      .filter({ hasText: 'You are allergic to penicillin.' })
      .waitFor();
    t.equal(
      await reply.getByTestId('tool-line').textContent(),
      'Searched memory for “allergy”: 1 entry',
      'the compact tool line',
    );
    t.match(
      JSON.stringify(ai.calls[0]!.body.messages),
      'Allergic to penicillin',
      'the always-included fact is in the first request',
    );
    t.match(
      ai.calls[1]!.body.messages.at(-1),
      { role: 'tool', content: /Allergic to penicillin/ },
      'the tool result reached the model',
    );
    await page.locator('#page-title').filter({ hasText: 'Penicillin allergy' }).waitFor();
    await page.locator('.chat-items a').filter({ hasText: 'Penicillin allergy' }).waitFor();
    t.pass('the chat got its generated title, in the header and the list');
    // After a reload the stored tool call is still shown.
    await page.reload();
    await page.getByTestId('tool-line').filter({ hasText: 'Searched memory for “allergy”: 1 entry' }).waitFor();
  });

  await step('search', async () => {
    // Another chat, so the search has something to tell apart.
    const other = (await svc.request('POST', '/api/v1/chats', { token: svc.admin.token, body: { title: 'Holiday' } }))
      .body.id;
    await page.goto(`${svc.url}/#/chats/${other}`);
    await page.locator('#page-title').filter({ hasText: 'Holiday' }).waitFor();
    await page.getByTestId('chat-search').fill('allergic');
    await page.getByTestId('chat-search').press('Enter');
    const hits = page.getByTestId('search-hit');
    await hits.first().waitFor();
    const question = hits.filter({ hasText: 'What am I allergic to?' });
    await question.click();
    await page.locator('#page-title').filter({ hasText: 'Penicillin allergy' }).waitFor();
    t.match(page.url(), /#\/chats\/[0-9a-f-]+\?message=[0-9a-f-]+$/, 'the result opens the chat at the message');
    const focused = page.locator('.msg.msg-focus');
    await focused.waitFor();
    t.equal(await focused.getAttribute('data-testid'), 'msg-user');
    t.match(await focused.textContent(), 'What am I allergic to?', 'the message is highlighted');
    await b.shot('assistant-memory-search');
  });

  await step('export', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-markdown').click()]);
    t.equal(download.suggestedFilename(), 'Penicillin-allergy.md');
    const text = fs.readFileSync((await download.path())!, 'utf8');
    t.match(text, /^# Penicillin allergy\n/);
    t.match(text, 'What am I allergic to?');
    t.match(text, '> Searched memory for “allergy”: 1 entry');
    t.match(text, 'You are allergic to penicillin.');
  });

  t.same(b.problems, [], 'no console errors');
});
