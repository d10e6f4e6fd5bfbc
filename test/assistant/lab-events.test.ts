/**
 * The assistant reads the event log, against the fake model scripted to call each tool:
 * search_events finds the caller's events by words (in either language) and filters, never
 * another user's similar ones; event_stats counts what the event log holds; delivery_status says
 * where an event went and refuses another user's event; the tools are offered only to a user with
 * events, described in the user's language; a chat opened on an event carries it to the model.
 */
import t from 'tap';
import { TEST_PLUGINS } from '../helpers/service.ts';
import { call, lab, offered, toolResults } from './lab-support.ts';
import { harness, named, newChat, send, text } from './support.ts';

const env = { SERVICE_PLUGINS: TEST_PLUGINS };

t.test("search_events: the caller's matching events, newest first, never another user's", async (t) => {
  const { svc, ai } = await harness(t, env);
  const u = await svc.user();
  const v = await svc.user();
  const mine = await lab(t, svc, u.token);
  const theirs = await lab(t, svc, v.token);
  const backup = await mine.emit('thing_happened', 'nightly backup of the NAS');
  const disk = await mine.emit('alarm', 'NAS disk sda failing');
  const other = await theirs.emit('alarm', 'NAS disk sdb failing, secret of the other user');
  await mine.targets.Sink!.sink.waitFor(2);

  const chat = await newChat(svc, u.token);
  ai.next(call('search_events', { query: 'disk failing' }));
  const r = await send(svc, u.token, chat, 'What happened to the NAS disk?');
  t.equal(r.status, 200);
  t.same(
    offered(ai.calls[0]!.body),
    [
      'delivery_status',
      'event_stats',
      'generate_health_report',
      'schedule_message',
      'search_events',
      'send_notification',
    ],
    'with events and a target, the relay tools are offered beside the report tool',
  );
  const found = toolResults(ai.calls[1]!.body)[0];
  t.same(
    found.events.map((e: any) => e.id),
    [disk],
    "only the caller's matching event",
  );
  t.match(found.events[0], {
    provider: 'NAS',
    provider_kind: 'example',
    event_type: 'alarm',
    severity: 'critical',
    message: 'ALARM NAS disk sda failing',
  });
  t.notMatch(
    JSON.stringify(ai.calls[1]!.body),
    /sdb|secret of the other user/,
    'nothing of the other user reaches the model',
  );
  t.match(named(r, 'tool').find((e) => e.data.status === 'done')!.data, {
    name: 'search_events',
    query: 'disk failing',
    count: 1,
  });

  // No words: the filters alone, newest first; severity and provider narrow it; Russian words find the Russian
  // rendering.
  ai.next(call('search_events', { last_hours: 24 }));
  await send(svc, u.token, chat, 'Everything from the last day');
  t.same(
    toolResults(ai.calls[3]!.body)[0].events.map((e: any) => e.id),
    [disk, backup],
    'newest first',
  );
  ai.next(call('search_events', { provider: 'nas', severity: 'info' }));
  await send(svc, u.token, chat, 'Only the info ones');
  t.same(
    toolResults(ai.calls[5]!.body)[0].events.map((e: any) => e.id),
    [backup],
  );
  ai.next(call('search_events', { query: 'тревога' }));
  await send(svc, u.token, chat, 'Тревоги?');
  t.same(
    toolResults(ai.calls[7]!.body)[0].events.map((e: any) => e.id),
    [disk],
    'the Russian message of the event is searched too',
  );
  ai.next(call('search_events', { since: '2999-01-01T00:00:00Z' }));
  await send(svc, u.token, chat, 'The future');
  t.same(toolResults(ai.calls[9]!.body)[0].events, [], 'a period with nothing');
  ai.next(call('search_events', { severity: 'catastrophic' }));
  await send(svc, u.token, chat, 'Bad filter');
  t.match(
    toolResults(ai.calls[11]!.body)[0],
    { error: /severity must be one of/ },
    'a wrong filter is said to the model',
  );

  // The other user searching the same words finds only theirs.
  const chatV = await newChat(svc, v.token);
  ai.next(call('search_events', { query: 'disk failing' }));
  await send(svc, v.token, chatV, 'Disk?');
  t.same(
    toolResults(ai.calls[13]!.body)[0].events.map((e: any) => e.id),
    [other],
  );
  t.notMatch(JSON.stringify(ai.calls[13]!.body), /sda/);

  // Tokens of the tool rounds are counted as today: one message, both rounds' tokens.
  const quota = (await svc.request('GET', '/api/v1/chats/quota', { token: v.token })).body;
  t.equal(quota.messages_used, 1);
  t.ok(quota.tokens_used > 0);
  t.match(text(r), /./);
});

t.test('event_stats counts what the event log holds; delivery_status says where an event went', async (t) => {
  const { svc, ai } = await harness(t, env);
  const u = await svc.user();
  const v = await svc.user();
  const mine = await lab(t, svc, u.token, { targets: { Phone: 'en', Broken: 'en' } });
  await svc.request('PUT', `/api/trackers/${mine.tracker.id}/targets/${mine.targets.Broken!.id}`, { token: u.token });
  mine.targets.Broken!.sink.respond(400);
  const second = await lab(t, svc, u.token, { provider: 'Router', targets: {} });
  const theirs = await lab(t, svc, v.token);
  const ids = [
    await mine.emit('alarm', 'disk one'),
    await mine.emit('alarm', 'disk two'),
    await mine.emit('thing_happened', 'backup'),
    await second.emit('thing_happened', 'reboot'),
    await second.emit('stale_thing', 'old'),
  ];
  const foreign = await theirs.emit('alarm', 'their disk');
  await mine.targets.Phone!.sink.waitFor(3);
  for (let i = 0; i < 20; i++) {
    const failed = await svc.service.core.db.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM deliveries WHERE user_id = ? AND status = 'failed'`,
      [u.id],
    );
    if (Number(failed?.n) === 3) break;
    await mine.relay.tick();
  }

  const chat = await newChat(svc, u.token);
  ai.next(call('event_stats', {}));
  await send(svc, u.token, chat, 'How noisy was this week?');
  const stats = toolResults(ai.calls[1]!.body)[0];
  // The event log through the API, counted here the same way.
  const log = (await svc.request('GET', '/api/events', { token: u.token, headers: {} })).body.events as any[];
  t.equal(log.length, 5);
  const tally = (f: (e: any) => string) => {
    const m: Record<string, number> = {};
    for (const e of log) m[f(e)] = (m[f(e)] ?? 0) + 1;
    return m;
  };
  const asMap = (list: any[], key: string) => Object.fromEntries(list.map((x) => [x[key], x.count]));
  t.equal(stats.total, log.length);
  t.same(
    asMap(stats.by_event_type, 'event_type'),
    tally((e) => e.event_type),
  );
  t.same(
    asMap(stats.by_severity, 'severity'),
    tally((e) => e.severity),
  );
  t.same(
    asMap(stats.by_dispatch_status, 'dispatch_status'),
    tally((e) => e.dispatch_status),
  );
  t.same(asMap(stats.by_provider, 'provider'), { NAS: 3, Router: 2 });
  t.same(
    stats.failing_targets,
    [{ target: 'Broken', kind: 'recorder', failed_deliveries: 3 }],
    'the target that failed most',
  );
  t.notMatch(JSON.stringify(stats), /their disk/);

  ai.next(call('event_stats', { provider: 'Router', last_hours: 1 }));
  await send(svc, u.token, chat, 'And the router?');
  t.match(toolResults(ai.calls[3]!.body)[0], {
    total: 2,
    by_provider: [{ provider: 'Router', count: 2 }],
    failing_targets: [],
  });

  ai.next(call('delivery_status', { event_id: ids[0] }));
  await send(svc, u.token, chat, 'Where did the first alarm go?');
  const status = toolResults(ai.calls[5]!.body)[0];
  t.match(status.event, { id: ids[0], event_type: 'alarm', dispatch_status: 'partial' });
  t.same(status.deliveries.map((d: any) => [d.target, d.status]).sort(), [
    ['Broken', 'failed'],
    ['Phone', 'sent'],
  ]);
  t.match(
    status.deliveries.find((d: any) => d.target === 'Broken'),
    { last_status_code: 400, last_error: /sink answered 400/ },
  );
  t.match(status.summary, { deferred: false, digested: false, edited: false, replayed: false });

  ai.next(call('delivery_status', { event_id: foreign }));
  await send(svc, u.token, chat, 'And this one?');
  t.match(
    toolResults(ai.calls[7]!.body)[0],
    { error: /No event with this id/ },
    "another user's event does not exist for the caller",
  );
  t.notMatch(JSON.stringify(ai.calls[7]!.body), /their disk/);
});

t.test("tool descriptions in the user's language; a chat opened on an event carries it to the model", async (t) => {
  const { svc, ai } = await harness(t, env);
  const u = await svc.user();
  await t.equal(
    (await svc.request('PATCH', '/api/v1/users/me', { token: u.token, body: { locale: 'ru' } })).status,
    200,
  );
  const v = await svc.user();
  const mine = await lab(t, svc, u.token, { targets: { Дача: 'ru' } });
  const theirs = await lab(t, svc, v.token);
  const earlier = await mine.emit('thing_happened', 'UPS on battery');
  const event = await mine.emit('alarm', 'UPS battery low');
  const foreign = await theirs.emit('alarm', 'their UPS');
  await mine.targets.Дача!.sink.waitFor(2);

  t.equal(
    (await svc.request('POST', '/api/v1/chats', { token: u.token, body: { event_id: foreign } })).status,
    404,
    "another user's event cannot be asked about",
  );
  const created = await svc.request('POST', '/api/v1/chats', { token: u.token, body: { event_id: event } });
  t.equal(created.status, 201);
  t.match(created.body, { event_id: event, title: 'О событии: ТРЕВОГА UPS battery low' });
  await send(svc, u.token, created.body.id, 'Что случилось?');
  const body = ai.calls[0]!.body;
  const tools = Object.fromEntries(body.tools.map((x: any) => [x.function.name, x.function.description]));
  t.match(tools.search_events, /журнале событий/, 'described in Russian');
  t.match(tools.send_notification, /«Дача»/, "the user's own targets are listed");
  t.notMatch(JSON.stringify(body.tools), /Sink/, "not another user's");
  const context = body.messages
    .filter((m: any) => m.role === 'system')
    .map((m: any) => m.content)
    .join('\n');
  t.match(context, `id: ${event}`, 'the event');
  t.match(context, 'message: ТРЕВОГА UPS battery low');
  t.match(context, '"name":"UPS battery low"', 'its payload');
  t.match(context, /- Дача \(recorder\): status sent/, 'its deliveries');
  t.match(context, new RegExp(`id ${earlier} — Событие: UPS on battery`), "the provider's recent history");
  t.notMatch(context, /their UPS/);
});
