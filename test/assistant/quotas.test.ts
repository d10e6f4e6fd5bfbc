import t from 'tap';
import { dayKey, nextDayStart } from '../../core/src/assistant/day.ts';
import type { TestService } from '../helpers/service.ts';
import { adminToken, harness, newChat, newUser, send } from './support.ts';

const quota = async (svc: TestService, token: string) =>
  (await svc.request('GET', '/api/v1/chats/quota', { token })).body;
const usage = async (svc: TestService, date: string) =>
  (await svc.request('GET', `/api/v1/admin/usage?date=${date}`, { token: svc.admin.token })).body;

t.test(
  'the message limit refuses the send at exactly the limit, with a 429 stating the limit and the reset time',
  async (t) => {
    const { svc, ai } = await harness(t);
    svc.clock.set('2030-06-15T10:00:00Z');
    await adminToken(svc);
    const u = await newUser(svc, { max_ai_messages_per_day: 2 });
    const chat = await newChat(svc, u.token);
    t.equal((await send(svc, u.token, chat, 'one')).status, 200);
    let q = await quota(svc, u.token);
    t.same(q, {
      messages_used: 1,
      tokens_used: q.tokens_used,
      message_limit: 2,
      token_limit: 500000,
      messages_exceeded: false,
      tokens_exceeded: false,
      resets_at: '2030-06-16T00:00:00.000Z',
    });
    t.equal((await send(svc, u.token, chat, 'two')).status, 200);
    const third = await send(svc, u.token, chat, 'three');
    t.equal(third.status, 429);
    t.equal(third.problem.code, 'message_quota_exceeded');
    t.match(third.problem.detail, /\b2\b/, 'the detail states the limit');
    t.match(third.problem.detail, /2030-06-16T00:00:00\.000Z/, 'and the reset time');
    t.equal(third.headers.get('retry-after'), String(14 * 3600));
    t.match(third.headers.get('content-type'), /application\/problem\+json/);
    t.equal(ai.calls.length, 2, 'the refused send never reached the model');
    q = await quota(svc, u.token);
    t.equal(q.messages_used, 2);
    t.equal(q.messages_exceeded, true);
    t.equal(q.tokens_exceeded, false);
    const hist = await svc.request('GET', `/api/v1/chats/${chat}/messages`, { token: u.token });
    t.equal(hist.body.messages.length, 4, 'the refused message was not saved');
  },
);

t.test('the token limit refuses once tokens used reach it; the message limit is checked first', async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc, { max_ai_tokens_per_day: 50, max_ai_messages_per_day: 3 });
  const chat = await newChat(svc, u.token);
  ai.next({ usage: { prompt_tokens: 30, completion_tokens: 19 } });
  t.equal((await send(svc, u.token, chat, 'one')).status, 200);
  let q = await quota(svc, u.token);
  t.equal(q.tokens_used, 49);
  t.equal(q.tokens_exceeded, false);
  ai.next({ usage: { prompt_tokens: 1, completion_tokens: 0 } });
  t.equal((await send(svc, u.token, chat, 'two')).status, 200, '49 < 50: still allowed');
  q = await quota(svc, u.token);
  t.equal(q.tokens_used, 50);
  t.equal(q.tokens_exceeded, true, 'at the limit counts as exceeded');
  const refused = await send(svc, u.token, chat, 'three');
  t.equal(refused.status, 429);
  t.equal(refused.problem.code, 'token_quota_exceeded');
  t.match(refused.problem.detail, /\b50\b/);
  t.match(refused.problem.detail, new RegExp(q.resets_at.replace(/[.]/g, '\\.')));
  t.equal((await quota(svc, u.token)).messages_used, 2, 'a refused send is not counted');

  // Both limits reached: the message limit is reported.
  await svc.request('PATCH', `/api/v1/admin/users/${u.id}`, {
    token: svc.admin.token,
    body: { max_ai_messages_per_day: 2 },
  });
  const both = await send(svc, u.token, chat, 'four');
  t.equal(both.status, 429);
  t.equal(both.problem.code, 'message_quota_exceeded');
});

t.test('the effective limit is the user value when set, else the default setting', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc);
  let q = await quota(svc, u.token);
  t.equal(q.message_limit, 100, 'seeded default');
  t.equal(q.token_limit, 500000);
  await svc.request('PATCH', '/api/v1/admin/settings', {
    token: svc.admin.token,
    body: { default_max_ai_messages_per_day: 7, default_max_ai_tokens_per_day: 7000 },
  });
  q = await quota(svc, u.token);
  t.equal(q.message_limit, 7);
  t.equal(q.token_limit, 7000);
  await svc.request('PATCH', `/api/v1/admin/users/${u.id}`, {
    token: svc.admin.token,
    body: { max_ai_messages_per_day: 0, max_ai_tokens_per_day: 9 },
  });
  q = await quota(svc, u.token);
  t.equal(q.message_limit, 0, 'a user value of 0 overrides the default');
  t.equal(q.token_limit, 9);
  t.equal(q.messages_exceeded, true);
  const chat = await newChat(svc, u.token);
  t.equal((await send(svc, u.token, chat, 'hi')).status, 429);
  await svc.request('PATCH', `/api/v1/admin/users/${u.id}`, {
    token: svc.admin.token,
    body: { max_ai_messages_per_day: null, max_ai_tokens_per_day: null },
  });
  q = await quota(svc, u.token);
  t.equal(q.message_limit, 7, 'null falls back to the default');
  t.equal(q.token_limit, 7000);
});

t.test('counters reset at the next UTC day boundary', async (t) => {
  const { svc } = await harness(t);
  svc.clock.set('2030-01-01T23:59:00Z');
  await adminToken(svc);
  const u = await newUser(svc, { max_ai_messages_per_day: 1 });
  const chat = await newChat(svc, u.token);
  t.equal((await send(svc, u.token, chat, 'late')).status, 200);
  const refused = await send(svc, u.token, chat, 'again');
  t.equal(refused.status, 429);
  t.match(refused.problem.detail, /2030-01-02T00:00:00\.000Z/);
  t.equal(refused.headers.get('retry-after'), '60');
  svc.clock.set('2030-01-02T00:00:00Z');
  const q = await quota(svc, u.token);
  t.equal(q.messages_used, 0, 'a new day starts empty');
  t.equal(q.resets_at, '2030-01-03T00:00:00.000Z');
  t.equal((await send(svc, u.token, chat, 'new day')).status, 200);
  const day1 = (await usage(svc, '2030-01-01')).users.find((x: any) => x.user_id === u.id);
  const day2 = (await usage(svc, '2030-01-02')).users.find((x: any) => x.user_id === u.id);
  t.equal(day1.messages, 1);
  t.equal(day2.messages, 1);
  t.ok(day1.tokens > 0 && day2.tokens > 0);
});

t.test('SERVICE_QUOTA_TIMEZONE moves the day boundary', async (t) => {
  const { svc } = await harness(t, { SERVICE_QUOTA_TIMEZONE: 'Asia/Tokyo' });
  svc.clock.set('2030-01-01T14:59:00Z'); // 23:59 in Tokyo
  await adminToken(svc);
  const u = await newUser(svc, { max_ai_messages_per_day: 1 });
  const chat = await newChat(svc, u.token);
  t.equal((await send(svc, u.token, chat, 'one')).status, 200);
  t.equal((await quota(svc, u.token)).resets_at, '2030-01-01T15:00:00.000Z');
  t.equal((await send(svc, u.token, chat, 'two')).status, 429);
  t.equal(
    (await usage(svc, '2030-01-01')).users.find((x: any) => x.user_id === u.id).messages,
    1,
    'counted on the Tokyo date',
  );
  svc.clock.set('2030-01-01T15:00:01Z');
  t.equal((await send(svc, u.token, chat, 'three')).status, 200);
  t.equal((await usage(svc, '2030-01-02')).users.find((x: any) => x.user_id === u.id).messages, 1);
});

t.test('concurrent sends cannot overshoot the message limit', async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc, { max_ai_messages_per_day: 3 });
  const chat = await newChat(svc, u.token);
  ai.setScript(() => ({ text: 'ok', delayMs: 30 }));
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => send(svc, u.token, chat, `m${i}`)));
  const statuses = results.map((r) => r.status).sort();
  t.same(statuses, [200, 200, 200, 429, 429, 429, 429, 429, 429, 429]);
  t.equal(ai.calls.length, 3);
  const q = await quota(svc, u.token);
  t.equal(q.messages_used, 3);
});

t.test('two concurrent sends at the edge of the message limit: exactly one passes', async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc, { max_ai_messages_per_day: 2 });
  const chat = await newChat(svc, u.token);
  const other = await newChat(svc, u.token);
  t.equal((await send(svc, u.token, chat, 'first')).status, 200);
  ai.setScript(() => ({ text: 'ok', delayMs: 30 }));
  // Both wait their turn in the opening gate and are counted one after the other.
  const results = await Promise.all([send(svc, u.token, chat, 'a'), send(svc, u.token, other, 'b')]);
  t.same(results.map((r) => r.status).sort(), [200, 429]);
  t.equal(results.find((r) => r.status === 429)!.problem.code, 'message_quota_exceeded');
  t.equal(ai.calls.length, 2);
  t.equal((await quota(svc, u.token)).messages_used, 2);
});

t.test('the admin usage view and the quota read the same records', async (t) => {
  const { svc } = await harness(t);
  const u = await newUser(svc);
  const v = await newUser(svc);
  const chat = await newChat(svc, u.token);
  await send(svc, u.token, chat, 'a');
  await send(svc, u.token, chat, 'b');
  const q = await quota(svc, u.token);
  const today = new Date().toISOString().slice(0, 10);
  const view = await svc.request('GET', '/api/v1/admin/usage', { token: svc.admin.token });
  t.equal(view.status, 200);
  t.equal(view.body.date, today, 'defaults to today');
  const row = view.body.users.find((x: any) => x.user_id === u.id);
  t.same(row, { user_id: u.id, email: u.email, messages: q.messages_used, tokens: q.tokens_used });
  t.same(
    view.body.users.find((x: any) => x.user_id === v.id),
    { user_id: v.id, email: v.email, messages: 0, tokens: 0 },
  );
  t.same(await usage(svc, today), view.body);
  t.equal((await svc.request('GET', '/api/v1/admin/usage?date=2030-13-45', { token: svc.admin.token })).status, 422);
  t.equal((await svc.request('GET', '/api/v1/admin/usage?date=2030-02-31', { token: svc.admin.token })).status, 422);
  t.equal((await svc.request('GET', '/api/v1/admin/usage?date=yesterday', { token: svc.admin.token })).status, 422);
  t.equal((await svc.request('GET', '/api/v1/admin/usage', { token: u.token })).status, 403);
});

t.test('day keys and boundaries follow the zone, across DST changes', async (t) => {
  const at = (s: string) => new Date(s);
  t.equal(dayKey(at('2030-03-09T23:30:00Z'), 'UTC'), '2030-03-09');
  t.equal(nextDayStart(at('2030-03-09T23:30:00Z'), 'UTC').toISOString(), '2030-03-10T00:00:00.000Z');
  // New York springs forward on 2030-03-10: midnight is 05:00Z before, 04:00Z after.
  t.equal(dayKey(at('2030-03-10T03:00:00Z'), 'America/New_York'), '2030-03-09');
  t.equal(nextDayStart(at('2030-03-09T12:00:00Z'), 'America/New_York').toISOString(), '2030-03-10T05:00:00.000Z');
  t.equal(nextDayStart(at('2030-03-10T12:00:00Z'), 'America/New_York').toISOString(), '2030-03-11T04:00:00.000Z');
  // And falls back on 2030-11-03.
  t.equal(nextDayStart(at('2030-11-03T12:00:00Z'), 'America/New_York').toISOString(), '2030-11-04T05:00:00.000Z');
  t.equal(dayKey(at('2030-01-01T14:59:59Z'), 'Asia/Tokyo'), '2030-01-01');
  t.equal(dayKey(at('2030-01-01T15:00:00Z'), 'Asia/Tokyo'), '2030-01-02');
  t.equal(nextDayStart(at('2030-01-01T15:00:00Z'), 'Asia/Kolkata').toISOString(), '2030-01-01T18:30:00.000Z');
});
