import { readFileSync } from 'node:fs';
import type { EmittedEvent, InboundWebhook } from '@herald/plugin-api';
import { createTestHost, validateConfig } from '@herald/plugin-api/testing';
import t from 'tap';
import plugin from './index.ts';

const TOKEN = 'planka-webhook-access-token';
const fixture = (name: string): string =>
  readFileSync(new URL(`../test-fixtures/${name}.json`, import.meta.url), 'utf8');
const rej = (status: number, message?: RegExp) => ({
  code: 'WEBHOOK_REJECTED',
  status,
  ...(message ? { message } : {}),
});

/** A delivery as Planka sends it: JSON body, bearer token, Planka's user agent. */
function req(raw: string, token: string | null = TOKEN): InboundWebhook {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'planka (+https://planka.example.net)',
  };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    body = undefined;
  }
  return { method: 'POST', headers, rawBody: Buffer.from(raw), body, query: {}, ip: '198.51.100.4' };
}

async function planka(config: Record<string, unknown> = {}) {
  const h = await createTestHost().provider(plugin, {
    access_token: TOKEN,
    base_url: 'https://planka.example.net/',
    ...config,
  });
  return h.instance.handleWebhook!;
}

function checked(events: EmittedEvent[]): EmittedEvent[] {
  for (const e of events) validateConfig(plugin.manifest.events![e.type]!.payload, e.payload);
  return events;
}

const card = {
  card_id: '1357158568008091270',
  card_name: 'Replace UPS battery',
  card_url: 'https://planka.example.net/cards/1357158568008091270',
  list_name: 'Backlog',
  board_name: 'Home lab',
  project_name: 'Household',
  user: 'Anna Petrova',
};

t.test('manifest', async (t) => {
  const m = plugin.manifest;
  t.equal(m.id, 'planka');
  t.equal(m.displayName, 'Planka (kanban)');
  t.equal(m.ingest, 'webhook');
  for (const type of ['card_created', 'card_moved', 'card_updated', 'card_commented', 'card_due_date_set']) {
    t.ok(m.events![type], type);
    t.ok(m.templates!.en![type] && m.templates!.ru![type], `${type} has en and ru templates`);
  }
});

t.test('the bearer token is required and compared', async (t) => {
  const send = await planka();
  const raw = fixture('card-create');
  t.equal((await send(req(raw))).events.length, 1);
  await t.rejects(send(req(raw, null)), rej(401, /missing bearer/));
  await t.rejects(send(req(raw, `${TOKEN}x`)), rej(401, /does not match/));
  await t.rejects(send(req(raw, 'short')), rej(401, /does not match/));
  await t.rejects(send({ ...req(raw), headers: { authorization: `Basic ${TOKEN}` } }), rej(401, /missing bearer/));
  await t.rejects(createTestHost().provider(plugin, { access_token: 'too-short' }), /invalid config/);
});

t.test('cardCreate → card_created', async (t) => {
  const [e] = checked((await (await planka())(req(fixture('card-create')))).events);
  t.same(e, {
    type: 'card_created',
    payload: { ...card, description_excerpt: 'The APC unit reports 60% battery health.\nOrder an RBC7.' },
  });
});

t.test('cardUpdate with a new list → card_moved with both list names', async (t) => {
  const events = checked((await (await planka())(req(fixture('card-update-moved')))).events);
  t.same(events, [
    {
      type: 'card_moved',
      payload: { ...card, list_name: 'In progress', from_list: 'Backlog', to_list: 'In progress' },
    },
  ]);
});

t.test('cardUpdate with a new name and description → card_updated', async (t) => {
  const events = checked((await (await planka())(req(fixture('card-update-renamed')))).events);
  t.same(events, [
    {
      type: 'card_updated',
      payload: {
        ...card,
        card_name: 'Replace UPS battery (RBC7)',
        changed_fields: ['name', 'description'],
        previous_name: 'Replace UPS battery',
        description_excerpt: 'Ordered, arrives Friday.',
      },
    },
  ]);
});

t.test('cardUpdate setting a due date → card_due_date_set; clearing it does not notify', async (t) => {
  const send = await planka();
  const events = checked((await send(req(fixture('card-update-due-date')))).events);
  t.same(events, [
    { type: 'card_due_date_set', payload: { ...card, due_date: '2026-01-09T15:00:00.000Z', previous_due_date: '' } },
  ]);
  const cleared = JSON.parse(fixture('card-update-due-date'));
  [cleared.data.item.dueDate, cleared.prevData.item.dueDate] = [null, cleared.data.item.dueDate];
  t.match(await send(req(JSON.stringify(cleared))), { status: 200, body: { ignored: true }, events: [] });
});

t.test('one update can be a move and a due date at once', async (t) => {
  const both = JSON.parse(fixture('card-update-moved'));
  both.data.item.dueDate = '2026-01-10T09:00:00.000Z';
  const events = checked((await (await planka())(req(JSON.stringify(both)))).events);
  t.same(
    events.map((e) => e.type),
    ['card_moved', 'card_due_date_set'],
  );
});

t.test('position-only updates and other events are ignored with 200', async (t) => {
  const send = await planka();
  t.same(await send(req(fixture('card-update-position'))), { status: 200, body: { ignored: true }, events: [] });
  t.same(await send(req(fixture('board-update'))), { status: 200, body: { ignored: true }, events: [] });
});

t.test('commentCreate → card_commented with the card from included', async (t) => {
  const events = checked((await (await planka())(req(fixture('comment-create')))).events);
  t.same(events, [
    { type: 'card_commented', payload: { ...card, comment_excerpt: 'Ordered from the usual shop, 2 pcs.' } },
  ]);
});

t.test('without base_url there is no card link', async (t) => {
  const send = await planka({ base_url: undefined });
  t.equal((await send(req(fixture('card-create')))).events[0]!.payload.card_url, '');
});

t.test('archive lists without a name show their type', async (t) => {
  const archived = JSON.parse(fixture('card-update-moved'));
  archived.data.included.lists[0] = { ...archived.data.included.lists[0], type: 'archive', name: null };
  const [e] = (await (await planka())(req(JSON.stringify(archived)))).events;
  t.equal(e!.payload.to_list, 'archive');
});

t.test('unexpected shapes get 422, non-JSON 400', async (t) => {
  const send = await planka();
  await t.rejects(send(req(JSON.stringify({ data: {} }))), rej(422, /event is missing/));
  await t.rejects(send(req(JSON.stringify({ event: 'cardCreate', user: {} }))), rej(422, /data is missing/));
  await t.rejects(
    send(req(JSON.stringify({ event: 'cardCreate', data: { item: { name: 'x' } } }))),
    rej(422, /data\.item\.id/),
  );
  const noPrev = JSON.parse(fixture('card-update-moved'));
  delete noPrev.prevData;
  await t.rejects(send(req(JSON.stringify(noPrev))), rej(422, /prevData is missing/));
  await t.rejects(
    send(req(JSON.stringify({ event: 'commentCreate', data: { item: { id: '1', text: 'hi' } } }))),
    rej(422, /cardId/),
  );
  await t.rejects(send(req('[]')), rej(422, /not a JSON object/));
  await t.rejects(send(req('not json')), rej(400));
  await t.rejects(send(req('not json', null)), rej(401), 'authentication comes first');
});
