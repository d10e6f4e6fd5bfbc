/** The fake Bot API must refuse what Telegram refuses, or the plugin tests prove nothing. */
import t from 'tap';
import { FakeTelegram } from '../test/fakes/telegram.ts';

const TOKEN = '1:AAA-fake_selftest_token_0000000000000';

async function setup(t: { teardown(fn: () => unknown): void }) {
  const fake = await new FakeTelegram()
    .addBot(TOKEN, { id: 1, username: 'B' })
    .addChat({ id: 5, type: 'private' })
    .start();
  t.teardown(() => fake.close());
  const post = async (method: string, body: BodyInit, type?: string) => {
    const res = await fetch(`${fake.url}/bot${TOKEN}/${method}`, {
      method: 'POST',
      body,
      headers: type ? { 'content-type': type } : {},
    });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  return { fake, post };
}

t.test('refuses a text over 4096 characters after entity parsing', async (t) => {
  const { post } = await setup(t);
  const ok = await post(
    'sendMessage',
    JSON.stringify({ chat_id: 5, parse_mode: 'HTML', text: `<b>${'x'.repeat(4096)}</b>` }),
    'application/json',
  );
  t.equal(ok.status, 200, 'tags do not count');
  const long = await post('sendMessage', JSON.stringify({ chat_id: 5, text: 'x'.repeat(4097) }), 'application/json');
  t.same(long, { status: 400, json: { ok: false, error_code: 400, description: 'Bad Request: message is too long' } });
});

t.test('refuses unbalanced HTML with the Bot API wording', async (t) => {
  const { post } = await setup(t);
  const r = await post(
    'sendMessage',
    JSON.stringify({ chat_id: 5, parse_mode: 'HTML', text: '<b>open <i>x</b>' }),
    'application/json',
  );
  t.equal(r.status, 400);
  t.equal(
    r.json.description,
    `Bad Request: can't parse entities: Unmatched end tag at byte offset 12, expected "</i>", found "</b>"`,
  );
  const r2 = await post(
    'sendMessage',
    JSON.stringify({ chat_id: 5, parse_mode: 'HTML', text: '<b>open' }),
    'application/json',
  );
  t.equal(r2.json.description, `Bad Request: can't parse entities: Can't find end tag corresponding to start tag "b"`);
});

t.test('accepts urlencoded and multipart bodies', async (t) => {
  const { fake, post } = await setup(t);
  const r = await post('sendMessage', new URLSearchParams({ chat_id: '5', text: 'form &amp;', parse_mode: 'HTML' }));
  t.equal(r.status, 200);
  t.equal(r.json.result.text, 'form &');
  const fd = new FormData();
  fd.set('chat_id', '5');
  fd.set('text', 'multi');
  const r2 = await post('sendMessage', fd);
  t.equal(r2.json.result.text, 'multi');
  t.equal(fake.sent.length, 2);
});

t.test('a malformed token path is 404 and an unknown one 401', async (t) => {
  const { fake } = await setup(t);
  const res = await fetch(`${fake.url}/botnot-a-token/getMe`);
  t.equal(res.status, 404);
  const res2 = await fetch(`${fake.url}/bot2:unknown/getMe`);
  t.same(await res2.json(), { ok: false, error_code: 401, description: 'Unauthorized' });
});
