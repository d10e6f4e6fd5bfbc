import http from 'node:http';
import { errorCode, missingLocaleStrings, secretPaths } from '@herald/plugin-api';
import { checkConfig, createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import { HttpEndpoint } from '../test/fakes/http-endpoint.ts';
import plugin, { compile, DEFAULT_RETRY_AFTER_MS, FIELDS, MAX_OUTPUT, render } from './index.ts';

async function setup(tt: any, extra: Record<string, unknown> = {}) {
  const endpoint = await new HttpEndpoint().start();
  tt.teardown(() => endpoint.close());
  const harness = await createTestHost().target(plugin, { url: `${endpoint.base}/hooks/herald?source=home`, ...extra });
  const o = { signal: harness.abort.signal, attempt: 1 };
  const send = (m = {}) => harness.instance.send(harness.message(m), o);
  return { endpoint, harness, send, o };
}

const caught = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as any,
  );
const MESSAGE = {
  deliveryId: 'del-42',
  eventId: 'evt-7',
  eventType: 'ups_on_battery',
  severity: 'critical' as const,
  title: 'UPS "rack" on battery',
  body: 'Load 40%\nRuntime 12 min',
  url: 'https://nas.example/ups',
};

t.test('manifest: id, limits, secret address and header values, defaults, complete locales', async (tt) => {
  const m = plugin.manifest;
  tt.equal(m.id, 'http');
  tt.same(m.limits, { maxMessageLength: 32_000, maxTitleLength: 1_000, overflow: 'truncate', formats: ['text'] });
  tt.same(secretPaths(m.configSchema), ['url', 'auth_value']);
  const props = (m.configSchema as any).properties;
  tt.same(
    [props.method.default, props.content_type.default, props.auth_header.default],
    ['POST', 'json', 'Authorization'],
  );
  tt.ok(props.body_template.maxLength > 4096, 'long enough for the web form to show a text area');
  tt.same(missingLocaleStrings(m, 'en'), []);
  tt.same(missingLocaleStrings(m, 'ru'), []);
});

t.test('default JSON body: every field by name, with the delivery id as Idempotency-Key', async (tt) => {
  const { endpoint, send } = await setup(tt);
  const r = await send(MESSAGE);
  const got = endpoint.received[0]!;
  tt.equal(got.method, 'POST');
  tt.equal(got.path, '/hooks/herald');
  tt.same(got.query, { source: 'home' });
  tt.equal(got.headers['content-type'], 'application/json');
  tt.equal(got.headers['idempotency-key'], 'del-42');
  tt.same(JSON.parse(got.body), {
    title: 'UPS "rack" on battery',
    text: 'Load 40%\nRuntime 12 min',
    severity: 'critical',
    event_type: 'ups_on_battery',
    locale: 'en',
    delivery_id: 'del-42',
    event_id: 'evt-7',
    test: false,
    url: 'https://nas.example/ups',
  });
  tt.equal(r!.detail, 'Delivered; the endpoint answered 200.');
});

t.test('method, form and text bodies; headers sent as configured', async (tt) => {
  let { endpoint, send } = await setup(tt, {
    method: 'PUT',
    content_type: 'form',
    auth_value: 'Bearer s3cr3t-token',
    headers: { 'X-Source': 'herald' },
  });
  await send(MESSAGE);
  let got = endpoint.received[0]!;
  tt.equal(got.method, 'PUT');
  tt.equal(got.headers['content-type'], 'application/x-www-form-urlencoded');
  tt.equal(got.headers.authorization, 'Bearer s3cr3t-token');
  tt.equal(got.headers['x-source'], 'herald');
  tt.same(Object.fromEntries(new URLSearchParams(got.body)), {
    title: 'UPS "rack" on battery',
    text: 'Load 40%\nRuntime 12 min',
    severity: 'critical',
    event_type: 'ups_on_battery',
    locale: 'en',
    delivery_id: 'del-42',
    event_id: 'evt-7',
    test: 'false',
    url: 'https://nas.example/ups',
  });

  ({ endpoint, send } = await setup(tt, { method: 'PATCH', content_type: 'text' }));
  await send(MESSAGE);
  got = endpoint.received[0]!;
  tt.equal(got.method, 'PATCH');
  tt.equal(got.headers['content-type'], 'text/plain; charset=utf-8');
  tt.equal(got.body, 'UPS "rack" on battery\n\nLoad 40%\nRuntime 12 min\n\nhttps://nas.example/ups');
});

t.test('a JSON template gets JSON-escaped values; {{test}} can stand as a bare boolean', async (tt) => {
  const { endpoint, send } = await setup(tt, {
    body_template:
      '{"msg": "{{title}}: {{text}}", "level": "{{ severity }}", "test": {{test}}, "id": "{{delivery_id}}"}',
  });
  await send({ ...MESSAGE, body: 'a "quoted" \\ line\nnext «ёлка»', test: true });
  tt.same(JSON.parse(endpoint.received[0]!.body), {
    msg: 'UPS "rack" on battery: a "quoted" \\ line\nnext «ёлка»',
    level: 'critical',
    test: true,
    id: 'del-42',
  });
});

t.test('a form template gets percent-encoded values, a text template the values as they are', async (tt) => {
  let { endpoint, send } = await setup(tt, {
    content_type: 'form',
    body_template: 'subject={{title}}&body={{text}}&prio={{severity}}',
  });
  await send({ ...MESSAGE, body: 'a&b=c d' });
  tt.same(Object.fromEntries(new URLSearchParams(endpoint.received[0]!.body)), {
    subject: 'UPS "rack" on battery',
    body: 'a&b=c d',
    prio: 'critical',
  });

  ({ endpoint, send } = await setup(tt, { content_type: 'text', body_template: '[{{severity}}] {{title}} — {{url}}' }));
  await send(MESSAGE);
  tt.equal(endpoint.received[0]!.body, '[critical] UPS "rack" on battery — https://nas.example/ups');
});

t.test('the template is bounded: a rendering past 1,000,000 characters is refused, not sent', async (tt) => {
  const { template } = compile(`${'{{text}}'.repeat(40)}`);
  const values = {
    title: '',
    text: 'x'.repeat(30_000),
    severity: 'info',
    event_type: 'e',
    url: '',
    locale: 'en',
    delivery_id: 'd',
    event_id: 'e',
    test: false,
    in_reply_to: '',
    previous_title: '',
  };
  tt.equal(render(template, values, 'text'), undefined, `40 × 30,000 = 1,200,000 > ${MAX_OUTPUT}`);
  tt.equal(
    render(template, { ...values, text: 'x'.repeat(25_000) }, 'text')!.length,
    1_000_000,
    'exactly the bound is fine',
  );

  const { endpoint, send } = await setup(tt, { content_type: 'text', body_template: '{{text}}'.repeat(40) });
  const err = await caught(send({ body: 'x'.repeat(30_000) }));
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.match(err.message, /more than 1000000 characters/);
  tt.same(endpoint.received, []);
});

t.test(
  '2xx delivers; 429 is rate limited with Retry-After; 5xx and network failures retry; other 4xx are permanent',
  async (tt) => {
    const { endpoint, send, harness, o } = await setup(tt);
    endpoint.answers.push({ status: 204 });
    tt.equal((await send())!.detail, 'Delivered; the endpoint answered 204.');
    tt.equal((await send({ locale: 'ru' }))!.detail, 'Доставлено, адрес ответил 200.');

    endpoint.answers.push({ status: 429, headers: { 'retry-after': '30' }, body: 'slow down' });
    let err = await caught(send());
    tt.equal(errorCode(err), 'RATE_LIMITED');
    tt.equal(err.retryAfterMs, 30_000);
    endpoint.answers.push({ status: 429 });
    tt.equal((await caught(send())).retryAfterMs, DEFAULT_RETRY_AFTER_MS);

    endpoint.answers.push({ status: 502, body: '<h1>Bad Gateway</h1>' });
    err = await caught(send());
    tt.equal(errorCode(err), 'RETRYABLE_SEND');
    tt.equal(err.statusCode, 502);

    endpoint.answers.push({ status: 422, body: '{"error":"missing field title"}' });
    err = await caught(send());
    tt.equal(errorCode(err), 'PERMANENT_SEND');
    tt.equal(err.statusCode, 422);
    tt.equal(err.message, 'the endpoint answered 422: {"error":"missing field title"}');

    endpoint.answers.push({ status: 401, body: 'unauthorized' });
    err = await caught(send({ locale: 'ru' }));
    tt.equal(errorCode(err), 'PERMANENT_SEND');
    tt.equal(err.message, 'адрес ответил 401: unauthorized; проверьте заголовки с учётными данными');

    const message = harness.message({ deliveryId: 'del-retry' });
    await endpoint.close();
    err = await caught(harness.instance.send(message, o));
    tt.equal(errorCode(err), 'RETRYABLE_SEND');
    tt.equal(err.statusCode, 0);
    tt.notMatch(err.message, /hooks\/herald/, 'the secret address is not in the error');
  },
);

t.test('a retry carries the same Idempotency-Key', async (tt) => {
  const { endpoint, harness, o } = await setup(tt);
  const message = harness.message({ deliveryId: 'del-same' });
  endpoint.answers.push({ status: 503 });
  await caught(harness.instance.send(message, o));
  await harness.instance.send(message, { ...o, attempt: 2 });
  tt.same(
    endpoint.received.map((r) => r.headers['idempotency-key']),
    ['del-same', 'del-same'],
  );
});

t.test('redirects are not followed: the body and the headers never reach another server', async (tt) => {
  const endpoint = await new HttpEndpoint().start();
  tt.teardown(() => endpoint.close());
  const moved = http.createServer((req, res) => res.writeHead(302, { location: `${endpoint.base}${req.url}` }).end());
  await new Promise<void>((r) => moved.listen(0, '127.0.0.1', r));
  tt.teardown(() => {
    moved.closeAllConnections();
    moved.close();
  });
  const harness = await createTestHost().target(plugin, {
    url: `http://127.0.0.1:${(moved.address() as { port: number }).port}/hook`,
    auth_header: 'X-Api-Key',
    auth_value: 'k3y-k3y-k3y',
  });
  const err = await caught(harness.instance.send(harness.message(), { signal: harness.abort.signal, attempt: 1 }));
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.match(err.message, /redirect/);
  tt.same(endpoint.received, []);
});

t.test(
  'update is not supported; reply sends a new request naming the earlier delivery and title (en, ru)',
  async (tt) => {
    let { endpoint, send, harness, o } = await setup(tt);
    const first = await send({ ...MESSAGE, title: 'UPS on battery' });
    tt.same(first!.messageRef, { title: 'UPS on battery' });
    const previous = { messageRef: first!.messageRef!, deliveryId: 'del-42', eventType: 'ups_on_battery' };
    tt.equal(await harness.instance.update!({ previous, message: harness.message() }, o), false);
    await harness.instance.reply!(
      {
        previous,
        message: harness.message({ ...MESSAGE, deliveryId: 'del-43', title: 'UPS on line', severity: 'info' }),
      },
      o,
    );
    tt.match(JSON.parse(endpoint.received.at(-1)!.body), {
      delivery_id: 'del-43',
      title: 'UPS on line',
      in_reply_to: 'del-42',
      previous_title: 'UPS on battery',
    });

    ({ endpoint, harness, o } = await setup(tt, { content_type: 'text' }));
    await harness.instance.reply!(
      { previous, message: harness.message({ title: 'UPS on line', body: 'Charge 90%' }) },
      o,
    );
    tt.equal(endpoint.received.at(-1)!.body, 'Update to “UPS on battery”:\nUPS on line\n\nCharge 90%');
    await harness.instance.reply!(
      { previous, message: harness.message({ locale: 'ru', title: 'ИБП от сети', body: 'Заряд 90%' }) },
      o,
    );
    tt.equal(endpoint.received.at(-1)!.body, 'Обновление к «UPS on battery»:\nИБП от сети\n\nЗаряд 90%');

    ({ endpoint, harness, o } = await setup(tt, {
      content_type: 'text',
      body_template: '{{previous_title}}|{{in_reply_to}}|{{title}}',
    }));
    await harness.instance.reply!({ previous, message: harness.message({ title: 'UPS on line' }) }, o);
    await harness.instance.send(harness.message({ title: 'Fresh' }), o);
    tt.same(
      endpoint.received.map((r) => r.body),
      ['UPS on battery|del-42|UPS on line', '||Fresh'],
      'empty on a message that updates nothing',
    );
  },
);

t.test('validateConfig: http(s) addresses, sendable headers, known placeholders, valid JSON templates', async (tt) => {
  const url = 'https://hooks.example.net/herald';
  tt.same(checkConfig(plugin, { url }), []);
  tt.same(
    checkConfig(plugin, {
      url: 'http://10.0.0.5:8123/api/webhook/abc',
      body_template: '{"a": "{{title}}", "t": {{test}}, "all": "{{text}}{{url}}"}',
    }),
    [],
    'a valid JSON template',
  );
  tt.same(
    checkConfig(plugin, { url, content_type: 'text', body_template: '{{title}} is not JSON' }),
    [],
    'text templates need not be JSON',
  );
  tt.throws(() => checkConfig(plugin, { url: 'ftp://hooks.example.net/herald' }), /url/, 'the schema refuses ftp');
  tt.throws(() => checkConfig(plugin, { url, method: 'GET' }), /method/);

  const problems = (c: Record<string, unknown>) =>
    plugin.validateConfig!({ url, method: 'POST', content_type: 'json', ...c } as any);
  const codes = (c: Record<string, unknown>) => problems(c).map((p) => `${p.path} ${p.code}`);
  tt.same(codes({ url: 'ftp://hooks.example.net' }), ['/url pattern']);
  tt.same(codes({ url: 'https://user:pw@hooks.example.net' }), ['/url url_credentials']);
  tt.same(
    codes({ body_template: '{"a": {{title}}}' }),
    ['/body_template invalid_json_template'],
    'a string placeholder outside quotes',
  );
  tt.match(
    problems({ body_template: '{"a": "{{title}}"' })[0]!.message,
    /does not produce valid JSON after substitution/,
  );
  tt.same(codes({ body_template: '{"a": "{{title}}",}' }), ['/body_template invalid_json_template']);
  tt.same(codes({ body_template: '{"a": "{{titel}}"}' }), ['/body_template template_syntax']);
  tt.match(
    problems({ body_template: '{"a": "{{titel}}"}' })[0]!.message,
    /unknown placeholders \{\{titel\}\}; known: \{\{title\}\}/,
  );
  tt.same(codes({ body_template: '{{#each items}}{{/each}}' }), ['/body_template template_syntax'], 'no loops');
  tt.same(codes({ content_type: 'text', body_template: 'a {{title' }), ['/body_template template_syntax']);
  tt.same(codes({ content_type: 'text', body_template: '{{title}}'.repeat(201) }), ['/body_template template_syntax']);
  tt.same(codes({ headers: { 'Content-Type': 'text/xml' } }), ['/headers/Content-Type reserved_header']);
  tt.same(codes({ headers: { 'Idempotency-Key': 'x' } }), ['/headers/Idempotency-Key reserved_header']);
  tt.same(codes({ headers: { 'X-A': '1', 'x-a': '2' } }), ['/headers/x-a duplicate_header']);
  tt.same(codes({ headers: { 'X-A': 'one\r\nX-Injected: 1' } }), ['/headers/X-A header_value']);
  tt.same(codes({ headers: { 'Bad Name': '1' } }), ['/headers/Bad Name pattern']);
  tt.same(codes({ auth_header: 'Authorization', auth_value: 'Bearer x', headers: { authorization: 'Basic y' } }), [
    '/auth_header duplicate_header',
  ]);
  tt.same(codes({ auth_header: 'Host', auth_value: 'x' }), ['/auth_header reserved_header']);
  tt.same(codes({ auth_value: 'Bearer x\nX-Injected: 1' }), ['/auth_value header_value']);
  tt.same(codes({ auth_header: 'Host' }), [], 'the credential header name matters only with a credential');
  tt.equal(FIELDS.length, 11);
});

t.test('the credential header takes any name; plain headers go as they are', async (tt) => {
  const { endpoint, send } = await setup(tt, {
    auth_header: 'X-Api-Key',
    auth_value: 'k3y-k3y-k3y',
    headers: { 'X-Source': 'herald', 'CF-Access-Client-Id': 'abc.access' },
  });
  await send();
  const got = endpoint.received[0]!.headers;
  tt.same(
    [got['x-api-key'], got['x-source'], got['cf-access-client-id'], got.authorization],
    ['k3y-k3y-k3y', 'herald', 'abc.access', undefined],
  );
  const none = await setup(tt);
  await none.send();
  tt.equal(none.endpoint.received[0]!.headers.authorization, undefined, 'no credential configured, none sent');
});
