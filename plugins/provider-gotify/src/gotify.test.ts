import { missingLocaleStrings } from '@herald/plugin-api';
import { checkEvent, createTestHost, dialectRequest } from '@herald/plugin-api/testing';
import t from 'tap';
import plugin from './index.ts';

const PATH = '/api/compat/gotify/message';
const TOKEN = 'AbCdEf0123456789_-xyzXYZ0123456789abcdefghi';

async function gotify(config: Record<string, unknown> = {}) {
  const host = createTestHost();
  const { instance } = await host.provider(plugin, config);
  const post = (o: {
    headers?: Record<string, string>;
    query?: Record<string, string>;
    body?: string | Buffer;
    json?: unknown;
  }) =>
    dialectRequest(plugin, instance, {
      path: PATH,
      headers: {
        'x-gotify-key': TOKEN,
        ...(o.json !== undefined ? { 'content-type': 'application/json' } : {}),
        ...o.headers,
      },
      query: o.query,
      body: o.json !== undefined ? JSON.stringify(o.json) : o.body,
    });
  return { post, host };
}

t.test('priorities map to severity on both sides of each boundary; absent is the configured default', async (t) => {
  const { post } = await gotify();
  const severity = async (priority?: number) =>
    (await post({ json: { message: 'm', ...(priority === undefined ? {} : { priority }) } })).result!.events[0]!
      .severity;
  t.same(await Promise.all([0, 3, 4, 7, 8, 10].map(severity)), [
    'info',
    'info',
    'warning',
    'warning',
    'critical',
    'critical',
  ]);
  const absent = await post({ json: { message: 'm' } });
  t.equal(absent.result!.events[0]!.payload.priority, 0, "Gotify's default application priority is 0");
  t.equal(absent.result!.events[0]!.severity, 'info');
  const loud = await gotify({ default_priority: 8 });
  const fromDefault = await loud.post({ json: { message: 'm' } });
  t.equal(
    fromDefault.result!.events[0]!.payload.priority,
    8,
    "the provider's default priority applies when none is sent",
  );
  t.equal(fromDefault.result!.events[0]!.severity, 'critical');
  t.equal(
    (await loud.post({ json: { message: 'm', priority: 2 } })).result!.events[0]!.severity,
    'info',
    'a sent priority wins over the default',
  );
});

t.test("JSON with extras: Markdown and the click URL; 200 with Gotify's message object", async (t) => {
  const { post } = await gotify();
  const extras = {
    'client::display': { contentType: 'text/markdown' },
    'client::notification': { click: { url: 'https://nas.example.net/backups' } },
  };
  const out = await post({ json: { title: 'Backup', message: '**nas** done', priority: 5, extras } });
  t.equal(out.token, TOKEN);
  t.equal(out.status, 200);
  t.same(out.result!.events[0]!.payload, {
    title: 'Backup',
    message: '**nas** done',
    priority: 5,
    markdown: true,
    url: 'https://nas.example.net/backups',
    source_ip: '192.0.2.1',
  });
  const body = out.answer!.body as Record<string, unknown>;
  t.type(body.id, 'number');
  t.ok(Number.isSafeInteger(body.id) && (body.id as number) > 0, 'the id is a positive integer');
  t.type(body.appid, 'number');
  t.match(body, { message: '**nas** done', title: 'Backup', priority: 5, extras });
  t.match(body.date, /^\d{4}-\d\d-\d\dT/);
  const plain = await post({ json: { message: 'x', extras: { 'client::display': { contentType: 'text/plain' } } } });
  t.equal(plain.result!.events[0]!.payload.markdown, false, 'text/plain is not Markdown');
  t.equal((await post({ json: { message: 'x' } })).result!.events[0]!.payload.markdown, false, 'no extras: plain text');
  const odd = await post({
    json: { message: 'x', extras: { 'client::notification': { click: { url: 'javascript:alert(1)' } } } },
  });
  t.notOk('url' in odd.result!.events[0]!.payload, 'only an http(s) click URL is kept');
});

t.test('form, multipart and query: the same fields without extras; the form wins over the query', async (t) => {
  const { post } = await gotify();
  const form = await post({
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'title=Disk+%C2%ABfull%C2%BB&message=%2Fsrv+at+93%25&priority=8',
  });
  t.same(form.result!.events[0]!.payload, {
    title: 'Disk «full»',
    message: '/srv at 93%',
    priority: 8,
    markdown: false,
    source_ip: '192.0.2.1',
  });
  t.equal(form.result!.events[0]!.severity, 'critical');
  const boundary = '----herald0123';
  const multipart = [
    `--${boundary}`,
    'Content-Disposition: form-data; name="title"',
    '',
    'my title',
    `--${boundary}`,
    'Content-Disposition: form-data; name="message"',
    '',
    'line one\r\nline two',
    `--${boundary}`,
    'Content-Disposition: form-data; name="file"; filename="x.txt"',
    'Content-Type: text/plain',
    '',
    'ignored',
    `--${boundary}`,
    'Content-Disposition: form-data; name="priority"',
    '',
    '4',
    `--${boundary}--`,
    '',
  ].join('\r\n');
  const mp = await post({ headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body: multipart });
  t.same(mp.result!.events[0]!.payload, {
    title: 'my title',
    message: 'line one\r\nline two',
    priority: 4,
    markdown: false,
    source_ip: '192.0.2.1',
  });
  t.equal(mp.result!.events[0]!.severity, 'warning');
  const query = await post({ query: { token: TOKEN, message: 'from the query', priority: '7' } });
  t.match(query.result!.events[0]!.payload, { message: 'from the query', priority: 7, title: '' });
  const both = await post({
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    query: { message: 'query' },
    body: 'message=form',
  });
  t.equal(both.result!.events[0]!.payload.message, 'form');
  const text = await post({ headers: { 'content-type': 'text/plain' }, body: 'message=not a form' });
  t.equal(text.status, 400, 'a text/plain body is not read as a form, as in Gotify');
});

t.test("refusals come out in Gotify's error shape", async (t) => {
  const { post } = await gotify();
  const missing = await post({ json: { title: 'no message' } });
  t.equal(missing.status, 400);
  t.same(missing.answer!.body, {
    error: 'Bad Request',
    errorCode: 400,
    errorDescription: "Field 'message' is required",
  });
  t.equal((await post({ json: { message: '' } })).status, 400, 'an empty message is missing too');
  const malformed = await post({ headers: { 'content-type': 'application/json' }, body: '{"message": "x"' });
  t.equal(malformed.status, 400);
  t.match(malformed.answer!.body, { error: 'Bad Request', errorCode: 400 });
  t.match((await post({ json: { message: 'x', priority: 'high' } })).answer!.body, {
    errorCode: 400,
    errorDescription: "Field 'priority' is not valid",
  });
  t.match((await post({ json: { message: 'x', priority: 2.5 } })).answer!.body, {
    errorDescription: "Field 'priority' is not valid",
  });
  t.match(
    (await post({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'message=x&priority=high' }))
      .answer!.body,
    { errorDescription: "Field 'priority' is not valid" },
  );
  t.match((await post({ json: { message: 7 } })).answer!.body, { errorDescription: "Field 'message' is not valid" });
  t.match((await post({ json: ['message'] })).answer!.body, { errorCode: 400 });
});

t.test("the token is found where Gotify looks for it; none is 401 in Gotify's shape", async (t) => {
  const host = createTestHost();
  const { instance } = await host.provider(plugin, {});
  const send = (headers: Record<string, string>, query?: Record<string, string>) =>
    dialectRequest(plugin, instance, {
      path: PATH,
      headers: { 'content-type': 'application/json', ...headers },
      query,
      body: '{"message":"x"}',
    });
  t.equal((await send({}, { token: 'from-query' })).token, 'from-query');
  t.equal((await send({ 'X-Gotify-Key': 'from-header' })).token, 'from-header');
  t.equal((await send({ authorization: 'Bearer from-bearer' })).token, 'from-bearer');
  t.equal((await send({ authorization: 'bearer lower-case' })).token, 'lower-case');
  t.equal(
    (await send({ 'x-gotify-key': 'header' }, { token: 'query' })).token,
    'query',
    'the query comes first, as in Gotify',
  );
  const none = await send({ authorization: 'Basic dXNlcjpwYXNz' });
  t.equal(none.status, 401);
  t.same(none.answer!.body, {
    error: 'Unauthorized',
    errorCode: 401,
    errorDescription: 'you need to provide a valid access token or user credentials to access this api',
  });
});

t.test('connection, examples and locales', async (t) => {
  const c = plugin.manifest.webhook!.connection!('https://herald.example.net', 'tok');
  t.same(c, {
    url: 'https://herald.example.net/api/compat/gotify/message?token=tok',
    fields: [
      { key: 'server_url', value: 'https://herald.example.net/api/compat/gotify' },
      { key: 'app_token', value: 'tok', secret: true },
    ],
    example:
      "curl 'https://herald.example.net/api/compat/gotify/message?token=tok' -F title='Backup' -F message='Backup " +
      "done'",
  });
  for (const [type, spec] of Object.entries(plugin.manifest.events!))
    checkEvent(plugin, { type, payload: spec.example! });
  t.same(missingLocaleStrings(plugin.manifest, 'en'), []);
  t.same(missingLocaleStrings(plugin.manifest, 'ru'), []);
  t.ok(plugin.manifest.templates?.ru?.gotify_message, 'a Russian template');
});
