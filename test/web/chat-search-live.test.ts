/**
 * In a real Chromium against the real service and the fake model: the chats' search follows the typing (one request
 * after a pause, none per keystroke), marks the matches in rendered-Markdown snippets and has one clear button; a
 * document opens in a reader with the documents search's matches marked; the chat header shows the model and
 * today's usage, on screen, at 1366×768 and 390×844 in English and Russian.
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
const b = await openBrowser(undefined, { shots: 'failed-search-live' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
  await ai.close();
});

const email = 'search-live@example.test';
const password = 'user password 1';
const created = await svc.request('POST', '/api/v1/admin/users', { token: svc.admin.token, body: { email, password } });
if (created.status !== 201) throw new Error(`user creation failed: ${created.text}`);
const token = (await svc.request('POST', '/api/auth/login', { body: { email, password } })).body.access_token as string;

async function say(chat: string, content: string, reply: string): Promise<void> {
  ai.next({ text: reply });
  const res = await fetch(`${svc.url}/api/v1/chats/${chat}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ content }),
  });
  await res.text();
  if (res.status !== 200) throw new Error(`send failed: ${res.status}`);
}

t.test('search as you type, the document reader and the chat header', async (t) => {
  const chat = (await svc.request('POST', '/api/v1/chats', { token, body: { title: 'Checkups' } })).body.id as string;
  await say(chat, 'What was my blood pressure?', 'Your **blood pressure** was 120/80 in January.');
  const doc = new FormData();
  doc.append(
    'file',
    new Blob(['# Plan\n\nEasy runs on Mondays.\n\nRun 12 km on Sundays, and rest on Sundays evening.\n'], {
      type: 'text/markdown',
    }),
    'plan.md',
  );
  const up = await fetch(`${svc.url}/api/v1/documents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: doc,
  });
  t.equal(up.status, 201);

  await step('login', async () => {
    await page.goto(svc.url);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('navigation').waitFor();
    await page.goto(`${svc.url}/#/chats`);
    await page.getByTestId('chat-search').waitFor();
  });

  await step('search-as-you-type', async () => {
    const searches: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/v1/search')) searches.push(new URL(r.url()).searchParams.get('q') ?? '');
    });
    await page.getByTestId('chat-search').pressSequentially('pressure', { delay: 40 });
    const hit = page.getByTestId('search-hit').filter({ hasText: 'Checkups' }).first();
    await hit.waitFor();
    t.same(searches, ['pressure'], 'one request, after the typing paused, without pressing Enter');
    const marks = await page.locator('[data-testid="search-results"] mark').allTextContents();
    t.ok(
      marks.some((m) => m.toLowerCase() === 'pressure'),
      `the match is marked (${marks.join(', ')})`,
    );
    t.ok(
      await page.locator('[data-testid="search-results"] .snippet strong').count(),
      'the snippet is rendered Markdown (bold, not asterisks)',
    );
    t.notMatch(await page.getByTestId('search-results').textContent(), /\*\*/);
    // Typing on replaces the results; the earlier request is aborted if still running.
    await page.getByTestId('chat-search').pressSequentially(' nothing-like-this', { delay: 20 });
    await page
      .getByTestId('search-results')
      .getByText('Nothing found')
      .or(page.locator('.search-hits'))
      .first()
      .waitFor();
    t.equal(await page.getByTestId('chat-search-clear').count(), 1, 'one clear button');
    await page.getByTestId('chat-search-clear').click();
    t.equal(await page.getByTestId('chat-search').inputValue(), '', 'cleared');
    await page.getByTestId('chat-groups').waitFor();
    t.equal(await page.getByTestId('search-results').count(), 0, 'the list is back');
  });

  await step('document-reader', async () => {
    await page.goto(`${svc.url}/#/documents`);
    await page.locator('#doc-q').fill('sundays');
    await page.locator('.hint mark').first().waitFor();
    await page.getByTestId('doc-read').first().click();
    const reader = page.getByTestId('doc-reader');
    await reader.waitFor();
    t.match(await reader.textContent(), 'Run 12 km on Sundays');
    // The marks are drawn once the text is in (a loaded machine can show the text a frame before them).
    await reader.locator('mark').nth(1).waitFor();
    t.same(await reader.locator('mark').allTextContents(), ['Sundays', 'Sundays'], 'both matches marked');
    t.equal(await page.getByTestId('reader-matches').textContent(), 'Matches for “sundays”: 2');
    t.equal(await reader.locator('h1').textContent(), 'Plan', 'the Markdown is rendered');
    await page.keyboard.press('Escape');
    await reader.waitFor({ state: 'detached' });
  });

  for (const lang of ['en', 'ru'] as const) {
    for (const [w, h] of [
      [1366, 768],
      [390, 844],
    ] as const) {
      await step(`header-${lang}-${w}`, async () => {
        await svc.request('PATCH', '/api/v1/users/me', { token, body: { locale: lang } });
        await page.setViewportSize({ width: w, height: h });
        await page.goto(`${svc.url}/#/chats/${chat}`);
        await page.reload();
        const model = page.getByTestId('chat-model');
        const quota = page.getByTestId('chat-quota');
        await model.waitFor();
        await quota.waitFor();
        t.equal(await model.textContent(), lang === 'ru' ? 'Модель: fake-small' : 'Model: fake-small');
        t.match(await quota.textContent(), lang === 'ru' ? /^Сообщений сегодня: 1 из / : /^Messages today: 1 of /);
        for (const [name, el] of [
          ['model', model],
          ['quota', quota],
        ] as const) {
          const box = await el.boundingBox();
          t.ok(
            box && box.x >= 0 && box.y >= 0 && box.x + box.width <= w && box.y + box.height <= h && box.width > 0,
            `the ${name} is on screen at ${w}×${h} in ${lang} (${JSON.stringify(box)})`,
          );
        }
        t.ok(
          await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
          'no sideways scroll',
        );
      });
    }
  }
  t.same(b.problems, [], 'no console errors or failed requests');
});
