import http from 'node:http';
import { errorCode, missingLocaleStrings, secretPaths } from '@herald/plugin-api';
import { checkConfig, createTestHost, FakeClock } from '@herald/plugin-api/testing';
import t from 'tap';
import { APP_TOKEN, PushoverApi, USER_KEY } from '../test/fakes/pushover-api.ts';
import plugin, { toPushoverHtml } from './index.ts';

async function setup(tt: any, extra: Record<string, unknown> = {}, host = createTestHost()) {
  const api = await new PushoverApi().start();
  tt.teardown(() => api.close());
  const harness = await host.target(plugin, { user_key: USER_KEY, app_token: APP_TOKEN, api_root: api.url, ...extra });
  const o = { signal: harness.abort.signal, attempt: 1 };
  const send = (m = {}) => harness.instance.send(harness.message(m, { fit: false }), o);
  return { api, harness, send, o };
}

const caught = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as any,
  );

t.test("manifest: id, Pushover's limits, HTML first, both keys secret, complete locales", async (tt) => {
  const m = plugin.manifest;
  tt.equal(m.id, 'pushover');
  tt.same(m.limits, { maxMessageLength: 1024, maxTitleLength: 250, overflow: 'truncate', formats: ['html', 'text'] });
  tt.same(secretPaths(m.configSchema), ['user_key', 'app_token']);
  tt.equal((m.configSchema as any).properties.api_root.default, 'https://api.pushover.net');
  tt.same(missingLocaleStrings(m, 'en'), []);
  tt.same(missingLocaleStrings(m, 'ru'), []);
});

t.test(
  'POST /1/messages.json, form-encoded: token, user, message, title, url, priority, html; the request id is kept',
  async (tt) => {
    const { api, send } = await setup(tt);
    const result = await send({
      format: 'html',
      severity: 'critical',
      title: 'UPS <b>on battery</b>',
      plainTitle: 'UPS on battery',
      body: 'Load <b>40%</b>',
      plainBody: 'Load 40%',
      url: 'https://nas.example/ups',
    });
    const got = api.received[0]!;
    tt.equal(got.method, 'POST');
    tt.equal(got.path, '/1/messages.json');
    tt.equal(got.headers['content-type'], 'application/x-www-form-urlencoded');
    tt.same(got.form, {
      token: APP_TOKEN,
      user: USER_KEY,
      message: 'Load <b>40%</b>',
      title: 'UPS on battery',
      url: 'https://nas.example/ups',
      priority: '1',
      html: '1',
    });
    tt.equal(result!.remoteId, api.delivered[0]!.request, "Pushover's request id is the remote id");
    tt.equal(result!.detail, 'Delivered; the application has 9999 messages left this month.');
    tt.same(result!.messageRef, { request: api.delivered[0]!.request, title: 'UPS on battery' });
  },
);

t.test('priority 0, 0, 1 by severity; device and sound when set; plain text without html=1', async (tt) => {
  const { api, send } = await setup(tt, { device: 'phone,tablet', sound: 'siren' });
  await send({ format: 'text', severity: 'info', body: 'a < b & c' });
  await send({ format: 'text', severity: 'warning' });
  await send({ format: 'text', severity: 'critical' });
  tt.same(
    api.received.map((r) => r.form.priority),
    ['0', '0', '1'],
  );
  tt.same(api.received[0]!.form, {
    token: APP_TOKEN,
    user: USER_KEY,
    message: 'a < b & c',
    title: 'Title',
    priority: '0',
    device: 'phone,tablet',
    sound: 'siren',
  });
  tt.equal(api.delivered.length, 3);
});

t.test("HTML is turned into Pushover's subset (b, i, u, font color, a href)", async (tt) => {
  tt.equal(
    toPushoverHtml(
      '<strong>Disk</strong> <em>sda</em> <ins>91%</ins><br>see <a href="https://nas.example" ' +
        'target="_blank">NAS</a> <code>df -h</code>',
    ),
    '<b>Disk</b> <i>sda</i> <u>91%</u>\nsee <a href="https://nas.example">NAS</a> df -h',
  );
  tt.equal(
    toPushoverHtml('<font color="#ff0000" size="3">red</font> <a href="javascript:alert(1)">x</a> <pre>code</pre>end'),
    '<font color="#ff0000">red</font> x code\nend',
  );
  tt.equal(toPushoverHtml('<ul><li>one</li><li>two</li></ul>'), '• one\n• two\n\n');
  const { api, send } = await setup(tt);
  await send({ format: 'html', body: '<strong>Backup</strong> done<br><s>old</s>' });
  tt.equal(api.received[0]!.form.message, '<b>Backup</b> done\nold');
});

t.test(
  'limits: 1,024 characters go as they are, 1,025 are cut to 1,024 as plain text; titles 250 vs 251',
  async (tt) => {
    const { api, send } = await setup(tt);
    const exact = `<b>${'x'.repeat(1017)}</b>`;
    tt.equal(exact.length, 1024);
    await send({ format: 'html', body: exact, plainBody: 'x'.repeat(1017) });
    tt.same([api.received[0]!.form.message, api.received[0]!.form.html], [exact, '1'], 'unchanged, as HTML');

    const over = `<b>${'x'.repeat(1018)}</b>`;
    await send({ format: 'html', body: over, plainBody: 'y'.repeat(1025) });
    const cut = api.received[1]!.form;
    tt.equal(cut.message.length, 1024);
    tt.equal(cut.message, `${'y'.repeat(1023)}…`, 'the plain text, so no tag is cut in half');
    tt.notOk('html' in cut, 'sent as plain text');

    await send({ plainTitle: 'T'.repeat(250) });
    tt.equal(api.received[2]!.form.title, 'T'.repeat(250));
    await send({ plainTitle: 'T'.repeat(251) });
    tt.equal(api.received[3]!.form.title, `${'T'.repeat(249)}…`);
    tt.equal(api.delivered.length, 4, 'Pushover accepted all four');
  },
);

t.test('a rejected application token or user key is an auth failure; other invalid input is permanent', async (tt) => {
  let { api, send } = await setup(tt, { app_token: 'a'.repeat(30) });
  let err = await caught(send());
  tt.equal(errorCode(err), 'AUTH_FAILED');
  tt.equal(err.statusCode, 400);
  tt.equal(
    err.message,
    'Pushover answered 400: application token is invalid, see https://pushover.net/api; the application token was ' +
      "rejected; check the API token on your application's page at pushover.net",
  );
  tt.notMatch(err.message, /aaaaaaaaaa/);

  ({ send } = await setup(tt, { user_key: 'u'.repeat(30) }));
  err = await caught(send({ locale: 'ru' }));
  tt.equal(errorCode(err), 'AUTH_FAILED');
  tt.match(err.message, /^Pushover ответил 400: user identifier is not a valid user.*; ключ пользователя не принят/);

  ({ api, send } = await setup(tt, { device: 'watch' }));
  err = await caught(send());
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.equal(err.message, 'Pushover answered 400: device name is not valid for user');

  ({ send } = await setup(tt, { sound: 'trumpet' }));
  err = await caught(send());
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.match(err.message, /sound is invalid/);
  tt.equal(api.delivered.length, 0);
});

t.test('429: the monthly limit, retried at X-Limit-App-Reset; 5xx and network failures retry', async (tt) => {
  const clock = new FakeClock('2026-03-31T23:00:00Z');
  const { api, send, harness, o } = await setup(tt, {}, createTestHost({ clock }));
  api.remaining = 0;
  let err = await caught(send());
  tt.equal(errorCode(err), 'RATE_LIMITED');
  tt.equal(err.retryAfterMs, 3_600_000, 'an hour until the reset on April 1st');
  tt.match(err.message, /monthly message limit/);

  api.remaining = 5;
  api.failNext = 503;
  err = await caught(send());
  tt.equal(errorCode(err), 'RETRYABLE_SEND');
  tt.equal(err.statusCode, 503);
  tt.match(err.message, /Service Unavailable/);
  await send();
  tt.equal(api.delivered.length, 1);

  await api.close();
  err = await caught(harness.instance.send(harness.message(), o));
  tt.equal(errorCode(err), 'RETRYABLE_SEND');
  tt.equal(err.statusCode, 0);
});

t.test('a redirect is refused: the keys in the form never reach another server', async (tt) => {
  const api = await new PushoverApi().start();
  tt.teardown(() => api.close());
  const moved = http.createServer((req, res) => res.writeHead(307, { location: `${api.url}${req.url}` }).end());
  await new Promise<void>((r) => moved.listen(0, '127.0.0.1', r));
  tt.teardown(() => {
    moved.closeAllConnections();
    moved.close();
  });
  const harness = await createTestHost().target(plugin, {
    user_key: USER_KEY,
    app_token: APP_TOKEN,
    api_root: `http://127.0.0.1:${(moved.address() as { port: number }).port}`,
  });
  const err = await caught(harness.instance.send(harness.message(), { signal: harness.abort.signal, attempt: 1 }));
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.match(err.message, /redirect/);
  tt.same(api.received, []);
});

t.test(
  'messages cannot be edited: update is not supported, reply opens with the earlier title (en, ru)',
  async (tt) => {
    const { api, send, harness, o } = await setup(tt);
    const first = await send({ plainTitle: 'UPS <on> battery' });
    const previous = { messageRef: first!.messageRef!, deliveryId: 'd1', eventType: 'ups_on_battery' };
    tt.equal(await harness.instance.update!({ previous, message: harness.message() }, o), false);

    await harness.instance.reply!(
      { previous, message: harness.message({ format: 'html', plainTitle: 'UPS on line', body: 'Charge <b>90%</b>' }) },
      o,
    );
    tt.equal(api.received.at(-1)!.form.message, '<i>Update to “UPS &lt;on&gt; battery”:</i>\nCharge <b>90%</b>');
    tt.equal(api.received.at(-1)!.form.title, 'UPS on line');

    await harness.instance.reply!(
      { previous, message: harness.message({ format: 'text', locale: 'ru', plainBody: 'Заряд 90%' }) },
      o,
    );
    tt.equal(api.received.at(-1)!.form.message, 'Обновление к «UPS <on> battery»:\nЗаряд 90%');
    tt.notOk('html' in api.received.at(-1)!.form);
  },
);

t.test('validateConfig: 30-character keys, device and sound names, an http(s) API address', async (tt) => {
  const ok = { user_key: USER_KEY, app_token: APP_TOKEN };
  tt.same(checkConfig(plugin, ok), []);
  tt.same(
    checkConfig(plugin, { ...ok, device: 'phone,tablet', sound: 'siren', api_root: 'http://pushover-proxy.lan:8080' }),
    [],
  );
  tt.throws(() => checkConfig(plugin, { ...ok, user_key: USER_KEY.slice(1) }), /user_key/, '29 characters');
  tt.throws(() => checkConfig(plugin, { ...ok, api_root: 'ftp://api.pushover.net' }), /api_root/);
  const codes = (c: Record<string, unknown>) =>
    plugin.validateConfig!({ ...ok, api_root: 'https://api.pushover.net', ...c } as any).map(
      (p) => `${p.path} ${p.code}`,
    );
  tt.same(codes({}), []);
  tt.same(codes({ user_key: `${USER_KEY}x` }), ['/user_key pattern'], '31 characters');
  tt.same(codes({ app_token: APP_TOKEN.replace('a', '-') }), ['/app_token pattern']);
  tt.same(codes({ device: 'phone tablet' }), ['/device pattern']);
  tt.same(codes({ sound: 'a'.repeat(21) }), ['/sound pattern']);
  tt.same(codes({ api_root: 'ftp://api.pushover.net' }), ['/api_root pattern']);
  tt.same(codes({ api_root: 'https://api.pushover.net/?token=x' }), ['/api_root url_form']);
});
