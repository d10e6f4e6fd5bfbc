import { missingLocaleStrings } from '@herald/plugin-api';
import { checkEvent, createTestHost, dialectRequest } from '@herald/plugin-api/testing';
import t from 'tap';
import plugin, { TOPIC_PATH } from './index.ts';
import { headerText } from './publish.ts';

const TOPIC = 'Ab-_cdefghijklmnop0123456789ABCDEFGHIJKLMNO';

async function ntfy() {
  const host = createTestHost();
  const { instance } = await host.provider(plugin, {});
  const publish = (o: {
    method?: 'PUT' | 'POST';
    headers?: Record<string, string>;
    query?: Record<string, string>;
    body?: string | Buffer;
  }) =>
    dialectRequest(plugin, instance, {
      path: TOPIC_PATH,
      method: o.method ?? 'POST',
      params: { topic: TOPIC },
      headers: o.headers,
      query: o.query,
      body: o.body,
    });
  const json = (body: unknown, headers: Record<string, string> = {}, method: 'PUT' | 'POST' = 'POST') =>
    dialectRequest(plugin, instance, {
      path: '/',
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  return { publish, json };
}

const event = (out: Awaited<ReturnType<Awaited<ReturnType<typeof ntfy>>['publish']>>) => out.result!.events[0]!;

t.test('priorities by number and by name, on both sides of each boundary', async (t) => {
  const { publish } = await ntfy();
  const severity = async (p: string) => event(await publish({ headers: { priority: p }, body: 'x' })).severity;
  t.same(await Promise.all(['1', '2', '3', '4', '5'].map(severity)), ['info', 'info', 'info', 'warning', 'critical']);
  t.same(await Promise.all(['min', 'low', 'default', 'high', 'max', 'urgent', 'HIGH'].map(severity)), [
    'info',
    'info',
    'info',
    'warning',
    'critical',
    'critical',
    'warning',
  ]);
  const none = await publish({ body: 'x' });
  t.equal(event(none).payload.priority, 3, "no priority is ntfy's default, 3");
  t.equal(event(none).severity, 'info');
  t.notOk('priority' in (none.answer!.body as object), 'and the answer leaves it out, as ntfy does');
  for (const [name, value] of [
    ['x-priority', '4'],
    ['p', '5'],
    ['prio', 'high'],
  ] as const) {
    t.ok(event(await publish({ headers: { [name]: value }, body: 'x' })).severity !== 'info', `the ${name} header`);
  }
  t.equal(event(await publish({ query: { p: 'urgent' }, body: 'x' })).severity, 'critical', 'the query parameter');
  const bad = await publish({ headers: { priority: '6' }, body: 'x' });
  t.equal(bad.status, 400);
  t.same(bad.answer!.body, { code: 40007, http: 400, error: 'invalid priority parameter' });
});

t.test('the body is the message; title, tags, click and Markdown from headers or the query', async (t) => {
  const { publish } = await ntfy();
  const out = await publish({
    method: 'PUT',
    headers: {
      title: 'Backup done',
      tags: 'warning,skull,backup, nas',
      click: 'https://nas.example.net/',
      markdown: 'yes',
    },
    body: '  **3 GB** in 4 min\n',
  });
  t.same(event(out).payload, {
    title: 'Backup done',
    message: '**3 GB** in 4 min',
    priority: 3,
    tags: ['backup', 'nas'],
    emojis: '⚠️ 💀',
    markdown: true,
    url: 'https://nas.example.net/',
    source_ip: '192.0.2.1',
  });
  const body = out.answer!.body as Record<string, unknown>;
  t.match(body, {
    event: 'message',
    topic: TOPIC,
    title: 'Backup done',
    message: '**3 GB** in 4 min',
    tags: ['warning', 'skull', 'backup', 'nas'],
    click: 'https://nas.example.net/',
    content_type: 'text/markdown',
  });
  t.match(body.id, /^[A-Za-z0-9]{12}$/);
  t.type(body.time, 'number');
  t.equal(body.expires, (body.time as number) + 12 * 3600);
  const short = await publish({
    headers: { 'x-title': 'X', ta: 'tada,+1,-1,partying_face', 'x-click': 'mailto:ops@example.net', md: '0' },
    body: 'm',
  });
  t.match(event(short).payload, { title: 'X', emojis: '🎉 👍 👎 🥳', tags: [], markdown: false });
  t.notOk('url' in event(short).payload, 'only an http(s) click becomes the link');
  const q = await publish({ query: { title: 'From query', message: 'line one\\nline two', tags: 'rotating_light' } });
  t.match(
    event(q).payload,
    { title: 'From query', message: 'line one\nline two', emojis: '🚨' },
    'message= with \\n, as ntfy reads it, when the body is empty',
  );
  t.equal(event(await publish({ query: { message: 'param' }, body: 'body wins' })).payload.message, 'body wins');
  t.equal(event(await publish({})).payload.message, 'triggered', 'no message at all is ntfy\'s "triggered"');
  t.equal(
    event(await publish({ headers: { 'content-type': 'text/markdown' }, body: '# h' })).payload.markdown,
    true,
    'Content-Type: text/markdown',
  );
  const utf8 = await publish({ headers: { title: Buffer.from('Привет ⚠', 'utf8').toString('latin1') }, body: 'x' });
  t.equal(event(utf8).payload.title, 'Привет ⚠', 'a UTF-8 header read back as UTF-8');
  t.equal(headerText('=?UTF-8?B?0J/RgNC40LLQtdGC?='), 'Привет', 'RFC 2047 base64');
  t.equal(headerText('=?utf-8?q?Disk_=E2=9A=A0_full?='), 'Disk ⚠ full', 'RFC 2047 quoted-printable');
  const binary = await publish({ body: Buffer.from([0xff, 0xfe, 0x00]) });
  t.same(binary.answer!.body, { code: 40011, http: 400, error: 'invalid message: message must be UTF-8 encoded' });
});

t.test('JSON publish at the root: the topic is in the body; its fields win over headers', async (t) => {
  const { json } = await ntfy();
  const out = await json(
    {
      topic: TOPIC,
      message: 'Disk full',
      title: 'nas',
      priority: 4,
      tags: ['warning', 'disk'],
      click: 'https://nas.example.net/',
      markdown: true,
    },
    { 'x-priority': '1', 'x-title': 'ignored' },
  );
  t.equal(out.token, TOPIC, 'the token is found in the body');
  t.same(event(out).payload, {
    title: 'nas',
    message: 'Disk full',
    priority: 4,
    tags: ['disk'],
    emojis: '⚠️',
    markdown: true,
    url: 'https://nas.example.net/',
    source_ip: '192.0.2.1',
  });
  t.equal(event(out).severity, 'warning');
  t.match(out.answer!.body, { event: 'message', topic: TOPIC, priority: 4 });
  const headers = await json({ topic: TOPIC, message: 'm' }, { 'x-priority': 'max', 'x-tags': 'skull' }, 'PUT');
  t.match(
    event(headers).payload,
    { priority: 5, emojis: '💀' },
    'headers apply where the JSON says nothing (Apprise sends X-Priority with its JSON)',
  );
  t.equal(event(headers).severity, 'critical');
  t.equal(event(await json({ topic: TOPIC })).payload.message, 'triggered');
  t.same((await json('{"topic": ')).answer!.body, {
    code: 40017,
    http: 400,
    error: 'invalid request: request body must be message JSON',
  });
  t.same((await json({ message: 'no topic' })).answer!.body, {
    code: 40009,
    http: 400,
    error: 'invalid request: topic invalid',
  });
  t.same((await json({ topic: 'a/b', message: 'x' })).answer!.body, {
    code: 40009,
    http: 400,
    error: 'invalid request: topic invalid',
  });
  t.equal((await json({ topic: TOPIC, message: 'x', priority: 9 })).status, 400);
  t.equal((await json({ topic: TOPIC, message: 'x', tags: 'warning' })).status, 400, 'tags must be a list in JSON');
  t.equal(
    event(await json({ topic: TOPIC, message: 'x', priority: 'high' })).severity,
    'warning',
    'a priority name in JSON is read as in a header',
  );
});

t.test("refusals in ntfy's shape; connection, examples and locales", async (t) => {
  t.same(
    plugin.manifest.webhook!.routes![0]!.errorBody!(
      { status: 404, code: 'not_found', detail: 'No webhook is registered at this address.' },
      { headers: {} },
    ).body,
    { code: 40401, http: 404, error: 'page not found' },
  );
  t.same(
    plugin.manifest.webhook!.routes![0]!.errorBody!({ status: 429, code: 'rate_limited', detail: '…' }, { headers: {} })
      .body,
    { code: 42901, http: 429, error: 'limit reached: too many requests, please be nice' },
  );
  t.same(plugin.manifest.webhook!.connection!('https://herald.example.net', 'tok'), {
    url: 'https://herald.example.net/tok',
    fields: [
      { key: 'server_url', value: 'https://herald.example.net' },
      { key: 'topic', value: 'tok', secret: true },
    ],
    example: "curl -d 'Backup done' https://herald.example.net/tok",
  });
  for (const [type, spec] of Object.entries(plugin.manifest.events!))
    checkEvent(plugin, { type, payload: spec.example! });
  t.same(missingLocaleStrings(plugin.manifest, 'en'), []);
  t.same(missingLocaleStrings(plugin.manifest, 'ru'), []);
  t.ok(plugin.manifest.templates?.ru?.ntfy_message);
});
