/**
 * The assistant acts only with the user's consent, against the fake model scripted to call the
 * acting tools: send_notification proposes (the stream shows the card), sends nothing until
 * approved, then sends to the chosen target in its language and the reply continues with the
 * outcome; a refusal or an expiry does nothing; another user's target is refused before anything
 * is proposed, and another user cannot decide; schedule_message creates the action only once
 * approved, with its schedule checked as the actions page checks it.
 */
import t from 'tap';
import { TEST_PLUGINS } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';
import { call, converse, lab, toolResults, tools } from './lab-support.ts';
import { harness, named, newChat, text } from './support.ts';

const env = { SERVICE_PLUGINS: TEST_PLUGINS };
const count = async (svc: any, sql: string, params: unknown[]) =>
  Number((await svc.service.core.db.get(sql, params))?.n ?? 0);

t.test(
  "send_notification: proposed, nothing sent until approved, then sent in the target's language; refused does nothing",
  async (t) => {
    const { svc, ai } = await harness(t, env);
    const u = await svc.user();
    const v = await svc.user();
    const mine = await lab(t, svc, u.token, { targets: { Phone: 'en', Дача: 'ru' } });
    const theirs = await lab(t, svc, v.token, { targets: { Theirs: 'en' } });
    const chat = await newChat(svc, u.token);
    const sent = () =>
      count(svc, `SELECT COUNT(*) AS n FROM event_log WHERE user_id = ? AND event_type = 'assistant_message'`, [u.id]);

    ai.next(
      call('send_notification', {
        targets: ['Дача'],
        title: 'Water the plants',
        text: 'The soil sensor reads dry.',
        translations: { ru: { title: 'Полей растения', text: 'Датчик почвы показывает сухость.' } },
      }),
    );
    let answer: any;
    let before = -1;
    const r = await converse(svc, u.token, chat, 'Remind the dacha to water the plants', async (e) => {
      if (e.event !== 'tool' || e.data.status !== 'needs_confirmation') return;
      // Proposed: nothing is sent yet, whatever the time it waits.
      before = await sent();
      t.equal(mine.targets.Дача!.sink.received.length, 0, 'nothing reached the target before the answer');
      answer = await svc.request('POST', `/api/v1/chats/${chat}/tool-calls/${e.data.id}`, {
        token: u.token,
        body: { approve: true },
      });
    });
    t.equal(r.status, 200);
    t.equal(before, 0, 'no event was written before the approval');
    const card = tools(r, 'needs_confirmation')[0];
    t.match(card, { name: 'send_notification', id: /^[0-9a-f-]{36}$/, expires_at: /Z$/ });
    t.match(card.proposal, {
      targets: [{ name: 'Дача', locale: 'ru', kind: 'recorder' }],
      messages: { en: { title: 'Water the plants' }, ru: { title: 'Полей растения' } },
    });
    t.equal(Date.parse(card.expires_at) - Date.now() > 9 * 60_000, true, 'it waits ten minutes');
    t.equal(answer.status, 200);
    t.match(answer.body, { id: card.id, status: 'done', result: { status: 'sent', targets: ['Дача'] } });
    const got = await mine.targets.Дача!.sink.waitFor(1);
    t.match(
      got[0]!.body,
      { title: 'Полей растения', body: 'Датчик почвы показывает сухость.', locale: 'ru' },
      'the target got it in its language',
    );
    t.equal(mine.targets.Phone!.sink.received.length, 0, 'the target not chosen got nothing');
    t.equal(await sent(), 1);

    // The reply went on with the outcome.
    t.equal(ai.calls.length, 2);
    t.match(toolResults(ai.calls[1]!.body)[0], {
      status: 'sent',
      event_id: answer.body.result.event_id,
      targets: ['Дача'],
    });
    const done = named(r, 'done')[0]!.data.message;
    t.match(
      done.tools,
      [{ name: 'send_notification', status: 'done', id: card.id, confirmation: 'approved' }],
      'the decided call is stored with the reply',
    );
    t.notOk(done.tools.some((x: any) => x.status === 'needs_confirmation'));
    t.equal(
      (
        await svc.request('POST', `/api/v1/chats/${chat}/tool-calls/${card.id}`, {
          token: u.token,
          body: { approve: true },
        })
      ).body.code,
      'tool_call_decided',
      'answered once',
    );

    // Refused: nothing is sent, the model hears it.
    ai.next(call('send_notification', { targets: ['Phone'], title: 'Spam', text: 'Never sent' }));
    let refused: any;
    const r2 = await converse(svc, u.token, chat, 'Send spam', async (e) => {
      if (e.event === 'tool' && e.data.status === 'needs_confirmation')
        refused = await svc.request('POST', `/api/v1/chats/${chat}/tool-calls/${e.data.id}`, {
          token: u.token,
          body: { approve: false },
        });
    });
    t.match(refused.body, { status: 'refused', result: null });
    t.match(toolResults(ai.calls[3]!.body)[0], { status: 'refused' });
    t.match(named(r2, 'done')[0]!.data.message.tools, [
      { name: 'send_notification', status: 'failed', confirmation: 'refused' },
    ]);
    t.equal(await sent(), 1, 'nothing more was sent');
    t.equal(mine.targets.Phone!.sink.received.length, 0);
    const conflict = await svc.request('POST', `/api/v1/chats/${chat}/tool-calls/${refused.body.id}`, {
      token: u.token,
      body: { approve: true },
    });
    t.equal(conflict.status, 409);
    t.equal(conflict.body.code, 'tool_call_decided', 'a refusal is final');

    // Another user's target: refused before anything is proposed.
    ai.next(call('send_notification', { targets: [theirs.targets.Theirs!.id], title: 'Hi', text: 'Hello' }));
    const r3 = await converse(svc, u.token, chat, 'Send to their target');
    t.equal(tools(r3, 'needs_confirmation').length, 0, 'no card');
    t.match(tools(r3, 'failed')[0], { name: 'send_notification' });
    t.match(toolResults(ai.calls[5]!.body)[0], { error: /Not one of the user's enabled targets/ });
    t.equal(
      await count(svc, 'SELECT COUNT(*) AS n FROM assistant_tool_calls WHERE user_id = ?', [u.id]),
      2,
      'nothing was proposed',
    );
    t.equal(theirs.targets.Theirs!.sink.received.length, 0);
  },
);

t.test('a proposal only its owner can answer; one nobody answers expires and does nothing', async (t) => {
  const { svc, ai } = await harness(t, env);
  const u = await svc.user();
  const v = await svc.user();
  const mine = await lab(t, svc, u.token, { targets: { Phone: 'en' } });
  const chat = await newChat(svc, u.token);
  const chatV = await newChat(svc, v.token);
  ai.next(call('send_notification', { targets: ['phone'], title: 'Later', text: 'Maybe' }));
  const checks: Record<string, any> = {};
  const r = await converse(svc, u.token, chat, 'Send it', async (e) => {
    if (e.event !== 'tool' || e.data.status !== 'needs_confirmation') return;
    const id = e.data.id;
    checks.otherUser = await svc.request('POST', `/api/v1/chats/${chat}/tool-calls/${id}`, {
      token: v.token,
      body: { approve: true },
    });
    checks.otherChat = await svc.request('POST', `/api/v1/chats/${chatV}/tool-calls/${id}`, {
      token: v.token,
      body: { approve: true },
    });
    checks.badBody = await svc.request('POST', `/api/v1/chats/${chat}/tool-calls/${id}`, {
      token: u.token,
      body: { approve: 'yes' },
    });
    // Ten minutes pass without an answer.
    svc.clock.advance(10 * 60_000 + 1000);
    checks.late = id;
  });
  svc.clock.real();
  t.equal(checks.otherUser.status, 404, 'another user cannot answer');
  t.equal(checks.otherChat.status, 404, 'nor through their own chat');
  t.equal(checks.badBody.status, 422);
  t.match(toolResults(ai.calls[1]!.body)[0], { status: 'expired' });
  t.match(named(r, 'done')[0]!.data.message.tools, [
    { name: 'send_notification', status: 'failed', confirmation: 'expired' },
  ]);
  const late = await svc.request('POST', `/api/v1/chats/${chat}/tool-calls/${checks.late}`, {
    token: u.token,
    body: { approve: true },
  });
  t.equal(late.status, 409);
  t.equal(late.body.code, 'tool_call_expired');
  t.equal(
    await count(svc, `SELECT COUNT(*) AS n FROM event_log WHERE event_type = 'assistant_message'`, []),
    0,
    'nothing was sent',
  );
  t.equal(mine.targets.Phone!.sink.received.length, 0);

  // A reply stopped while it waits cancels its proposal.
  ai.next(call('send_notification', { targets: ['Phone'], title: 'Stop', text: 'me' }));
  const ac = new AbortController();
  let pending = '';
  await converse(
    svc,
    u.token,
    chat,
    'x',
    (e) => {
      if (e.event === 'tool' && e.data.status === 'needs_confirmation') {
        pending = e.data.id;
        ac.abort();
      }
    },
    ac.signal,
  );
  t.ok(pending, 'the card was shown');
  // Up to 15 s, and failing if it stays pending (100 polls of 50 ms went on after 5 s as if it had ended).
  await waitFor("the stopped reply's proposal to leave 'pending'", async () => {
    const row = await svc.service.core.db.get('SELECT status FROM assistant_tool_calls WHERE id = ?', [pending]);
    return row?.status !== 'pending';
  });
  const stopped = await svc.request('POST', `/api/v1/chats/${chat}/tool-calls/${pending}`, {
    token: u.token,
    body: { approve: true },
  });
  t.equal(stopped.body.code, 'tool_call_expired', "a stopped reply's proposal cannot be approved");
  t.equal(mine.targets.Phone!.sink.received.length, 0);
});

t.test('schedule_message: the action is created only after approval, its schedule checked', async (t) => {
  const { svc, ai } = await harness(t, env);
  const u = await svc.user();
  const mine = await lab(t, svc, u.token, { targets: { Phone: 'en' } });
  const chat = await newChat(svc, u.token);
  const actions = async () => (await svc.request('GET', '/api/actions', { token: u.token })).body.actions as any[];

  ai.next(call('schedule_message', { schedule: '*/30 * * * * *', targets: ['Phone'], title: 'Too often', body: 'x' }));
  await converse(svc, u.token, chat, 'Every 30 seconds');
  t.match(
    toolResults(ai.calls[1]!.body)[0],
    { error: /more often than once a minute/ },
    'a sub-minute schedule is refused as the actions page refuses it',
  );
  ai.next(
    call('schedule_message', {
      schedule: '0 9 * * 1-5',
      timezone: 'Moon/Base',
      targets: ['Phone'],
      title: 'x',
      body: 'x',
    }),
  );
  await converse(svc, u.token, chat, 'Moon time');
  t.match(toolResults(ai.calls[3]!.body)[0], { error: /not an IANA time zone/ });

  ai.next(
    call('schedule_message', {
      name: 'Standup',
      schedule: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      targets: ['Phone'],
      title: 'Standup',
      body: 'Standup on {{date}}',
    }),
  );
  let listed: any[] = [];
  let answer: any;
  const r = await converse(svc, u.token, chat, 'Remind me of the standup on weekdays at 9', async (e) => {
    if (e.event !== 'tool' || e.data.status !== 'needs_confirmation') return;
    listed = await actions();
    answer = await svc.request('POST', `/api/v1/chats/${chat}/tool-calls/${e.data.id}`, {
      token: u.token,
      body: { approve: true },
    });
  });
  t.same(listed, [], 'no action before the approval');
  t.match(tools(r, 'needs_confirmation')[0].proposal, {
    name: 'Standup',
    schedule: '0 9 * * 1-5',
    timezone: 'Europe/Berlin',
    targets: [{ name: 'Phone' }],
    next_runs: [/Z$/, /Z$/, /Z$/],
  });
  t.match(answer.body, { status: 'done', result: { status: 'scheduled', name: 'Standup' } });
  const made = await actions();
  t.equal(made.length, 1);
  t.match(made[0], {
    id: answer.body.result.action_id,
    name: 'Standup',
    kind: 'message',
    schedule: '0 9 * * 1-5',
    timezone: 'Europe/Berlin',
    enabled: true,
    config: { target_ids: [mine.targets.Phone!.id], title: 'Standup', body: 'Standup on {{date}}' },
  });
  t.match(toolResults(ai.calls[5]!.body)[0], {
    status: 'scheduled',
    action_id: made[0].id,
    next_run_at: made[0].next_run_at,
  });
  t.match(text(r), /./);

  // Refused: no action.
  ai.next(call('schedule_message', { schedule: '0 8 * * *', targets: ['Phone'], title: 'Nope', body: 'Nope' }));
  await converse(svc, u.token, chat, 'Daily at 8', async (e) => {
    if (e.event === 'tool' && e.data.status === 'needs_confirmation')
      await svc.request('POST', `/api/v1/chats/${chat}/tool-calls/${e.data.id}`, {
        token: u.token,
        body: { approve: false },
      });
  });
  t.equal((await actions()).length, 1, 'a refused schedule creates nothing');
});
