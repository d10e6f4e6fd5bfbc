/**
 * The assistant and the relay together in a real Chromium, against the real service and the fake
 * model: "Ask the assistant" on an event opens a chat whose first request to the model carries the
 * event; a notification the assistant proposes shows a card with Send and Cancel, Send delivers it
 * to the chosen target and the reply goes on with the outcome, Cancel sends nothing; the card in
 * Russian; an AI digest created on the actions page.
 */
import t from 'tap';
import { call, lab } from '../assistant/lab-support.ts';
import { startFakeOpenAI } from '../fakes/openai.ts';
import { startService, TEST_PLUGINS } from '../helpers/service.ts';
import { ensureBuilt, openBrowser } from './browser.ts';

ensureBuilt();

const ai = await startFakeOpenAI({ apiKey: 'test-key' });
const svc = await startService({
  AI_BASE_URL: ai.baseUrl,
  AI_API_KEY: 'test-key',
  SERVICE_PLUGINS: TEST_PLUGINS,
  SERVICE_LOG_LEVEL: 'WARNING',
  SERVICE_SUPERVISED: 'false',
});
const b = await openBrowser(undefined, { shots: 'failed-ask' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
  await ai.close();
});

const email = 'lab@example.test';
const password = 'user password 1';
const created = await svc.request('POST', '/api/v1/admin/users', { token: svc.admin.token, body: { email, password } });
if (created.status !== 201) throw new Error(`user creation failed: ${created.text}`);
const token = (await svc.request('POST', '/api/auth/login', { body: { email, password } })).body.access_token as string;

const lastReply = () => page.getByTestId('msg-assistant').last();
const composer = () => page.locator('#composer');

t.test('ask the assistant about an event; consent cards', async (t) => {
  const mine = await lab(t, svc, token, { targets: { Phone: 'en', Дача: 'ru' } });
  await mine.emit('thing_happened', 'UPS on battery');
  const event = await mine.emit('alarm', 'UPS battery low');
  await mine.targets.Phone!.sink.waitFor(2);

  await step('login', async () => {
    await b.logIn(svc.url, email, password);
  });

  await step('ask', async () => {
    await b.nav('Event log');
    const row = page.getByTestId('event-row').filter({ hasText: 'ALARM UPS battery low' });
    await row.getByRole('button', { name: 'Show or hide details' }).click();
    await page.getByTestId('ask-assistant').click();
    await composer().waitFor();
    t.equal(
      await composer().inputValue(),
      'What happened here, and does anything need my attention?',
      'a question is suggested',
    );
    t.match(
      await page.locator('#page-title').textContent(),
      'About: ALARM UPS battery low',
      'the chat is named after the event',
    );
    t.notMatch(page.url(), /ask=/, 'the suggestion is offered once: a reload does not bring it back');
    const before = ai.calls.length;
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await lastReply().and(page.locator('[data-status="complete"]')).waitFor();
    const first = ai.calls[before]!.body;
    const system = first.messages
      .filter((m: any) => m.role === 'system')
      .map((m: any) => m.content)
      .join('\n');
    t.match(system, `id: ${event}`, 'the first request to the model carries the event');
    t.match(system, 'message: ALARM UPS battery low');
    t.match(system, /- Phone \(recorder\): status sent/, 'with its deliveries');
    t.match(system, /Thing: UPS on battery/, "and the provider's recent history");
    t.equal(first.messages.at(-1).content, 'What happened here, and does anything need my attention?');
  });

  await step('send', async () => {
    ai.next(call('send_notification', { targets: ['Phone'], title: 'Check the UPS', text: 'Its battery is low.' }), {
      text: 'Done: the phone has it.',
    });
    await composer().fill('Notify my phone');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const card = page.getByTestId('consent-card');
    await card.waitFor();
    t.match(await card.textContent(), /Send this notification\?/);
    t.match(await card.getByTestId('consent-targets').textContent(), /Phone \(English\)/);
    t.match(await card.getByTestId('consent-message').textContent(), /Check the UPS.*Its battery is low\./);
    t.equal(mine.targets.Phone!.sink.received.length, 2, 'nothing sent while the card waits');
    await card.getByTestId('consent-approve').click();
    const got = await mine.targets.Phone!.sink.waitFor(3);
    t.match(got[2]!.body, { title: 'Check the UPS', body: 'Its battery is low.' });
    await lastReply()
      .and(page.locator('[data-status="complete"]'))
      .filter({ hasText: 'Done: the phone has it.' })
      .waitFor();
    t.match(
      await lastReply().getByTestId('consent-outcome').textContent(),
      'Sent to Phone.',
      'the card shows the outcome',
    );
    t.equal(await page.getByTestId('consent-card').count(), 0);
  });

  await step('cancel-in-russian', async () => {
    await page.getByTestId('language').selectOption('ru');
    await page.getByRole('button', { name: 'Отправить', exact: true }).waitFor();
    ai.next(call('send_notification', { targets: ['Дача'], title: 'Проверь ИБП', text: 'Батарея садится.' }), {
      text: 'Хорошо, не отправляю.',
    });
    await composer().fill('Сообщи на дачу');
    await page.getByRole('button', { name: 'Отправить', exact: true }).click();
    const card = page.getByTestId('consent-card');
    await card.waitFor();
    t.match(await card.textContent(), /Отправить это уведомление\?/, 'the card in Russian');
    t.match(await card.getByTestId('consent-targets').textContent(), /Дача \(русский\)/);
    await card.getByTestId('consent-cancel').click();
    await lastReply()
      .and(page.locator('[data-status="complete"]'))
      .filter({ hasText: 'Хорошо, не отправляю.' })
      .waitFor();
    t.match(await lastReply().getByTestId('consent-outcome').textContent(), 'Отменено: ничего не отправлено.');
    t.equal(mine.targets.Дача!.sink.received.length, 0, 'nothing was sent');
    await page.reload();
    await lastReply().getByTestId('consent-outcome').waitFor();
    t.match(
      await lastReply().getByTestId('consent-outcome').textContent(),
      'Отменено',
      'the outcome stays after a reload',
    );
    await page.getByTestId('language').selectOption('en');
  });

  await step('ai-digest-action', async () => {
    await page.goto(`${svc.url}/#/actions`);
    await page.getByRole('button', { name: 'New action' }).click();
    await page.getByTestId('action-name').fill('Morning');
    await page.getByTestId('action-kind').selectOption('ai_digest');
    await page.getByTestId('action-target').first().check();
    await page.getByTestId('action-save').click();
    await page.getByTestId('action-row').filter({ hasText: 'Morning' }).waitFor();
    t.match(await page.getByTestId('action-row').filter({ hasText: 'Morning' }).textContent(), /AI digest to 1 target/);
    const [action] = (await svc.request('GET', '/api/actions', { token })).body.actions;
    t.match(action, { kind: 'ai_digest', config: { target_ids: [/./] } });
  });

  t.same(b.problems, [], 'no console errors');
});
