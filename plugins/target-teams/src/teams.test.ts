import http from 'node:http';
import { errorCode, missingLocaleStrings, secretPaths } from '@herald/plugin-api';
import { checkConfig, createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import { SIGNATURE, TEAMS_MAX_BYTES, TeamsWorkflowsFake, WORKFLOW_ID } from '../test/fakes/teams-workflows.ts';
import plugin, { cardText, IDEMPOTENCY_HEADER, MAX_PAYLOAD_BYTES } from './index.ts';

async function setup(tt: any, url?: (f: TeamsWorkflowsFake) => string) {
  const fake = await new TeamsWorkflowsFake().start();
  tt.teardown(() => fake.close());
  const harness = await createTestHost().target(plugin, { url: url ? url(fake) : fake.url() });
  const o = { signal: harness.abort.signal, attempt: 1 };
  const send = (m = {}) => harness.instance.send(harness.message(m, { fit: false }), o);
  return { fake, harness, send, o };
}

const caught = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as any,
  );

t.test('manifest: id, limits, plain-text format, the URL is the secret, locales complete', async (tt) => {
  const m = plugin.manifest;
  tt.equal(m.id, 'teams');
  tt.equal(m.kind, 'target');
  tt.same(m.limits, {
    maxMessageLength: 8000,
    maxTitleLength: 256,
    formats: ['text'],
    overflow: 'truncate',
    ratePerSecond: 1,
    concurrency: 1,
  });
  tt.same(secretPaths(m.configSchema), ['url']);
  tt.same(missingLocaleStrings(m, 'en'), []);
  tt.same(missingLocaleStrings(m, 'ru'), []);
});

t.test('send: one POST of an Adaptive Card message to the trigger URL, as the template expects', async (tt) => {
  const { fake, send } = await setup(tt);
  const result = await send({
    deliveryId: 'del-1',
    title: 'Disk full',
    body: 'Volume /data is at 97%.',
    url: 'https://nas.example/disks',
    severity: 'critical',
  });
  tt.equal(fake.received.length, 1);
  const got = fake.received[0]!;
  tt.equal(got.method, 'POST');
  tt.equal(got.path, `/workflows/${WORKFLOW_ID}/triggers/manual/paths/invoke`);
  tt.same(
    got.query,
    { 'api-version': '2016-06-01', sp: '/triggers/manual/run', sv: '1.0', sig: SIGNATURE },
    'the URL is posted to as given, signature included',
  );
  tt.match(got.headers['content-type'], /^application\/json/);
  tt.equal(got.headers[IDEMPOTENCY_HEADER], 'del-1');
  tt.same(got.body, {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', text: 'Disk full', weight: 'Bolder', size: 'Medium', color: 'Attention', wrap: true },
            { type: 'TextBlock', text: 'Volume /data is at 97%.', wrap: true },
          ],
          actions: [{ type: 'Action.OpenUrl', title: 'Open', url: 'https://nas.example/disks' }],
          msteams: { width: 'Full' },
        },
      },
    ],
  });
  tt.equal(fake.posted.length, 1, 'the run posted the card');
  tt.same(fake.failedRuns, []);
  tt.match(
    result,
    { remoteId: /^08584\d+CU\d\d$/, messageRef: { title: 'Disk full' } },
    'the workflow run id is the remote id',
  );
});

t.test('title colour follows the severity; the link button speaks the target language', async (tt) => {
  const { fake, send } = await setup(tt);
  for (const severity of ['info', 'warning', 'critical'] as const) await send({ severity });
  tt.same(
    fake.posted.map((c) => c.body[0].color),
    ['Default', 'Warning', 'Attention'],
  );
  await send({ locale: 'ru', url: 'https://x.example/' });
  tt.same(fake.posted.at(-1).actions, [{ type: 'Action.OpenUrl', title: 'Открыть', url: 'https://x.example/' }]);
  await send({ url: 'not a link' });
  tt.notOk('actions' in fake.posted.at(-1), 'no button without an http(s) link');
});

t.test('plain text is escaped for the TextBlock Markdown; lines become paragraphs, lists stay lists', async (tt) => {
  tt.equal(cardText('a*b*_c_ [x](y) `z` \\'), 'a\\*b\\*\\_c\\_ \\[x\\](y) \\`z\\` \\\\');
  tt.equal(
    cardText('Line one\nLine two\n\n- first *item*\n- second\n3. third\nafter'),
    'Line one\n\nLine two\n\n- first \\*item\\*\n- second\n3. third\n\nafter',
  );
  tt.equal(cardText('* star item\n+ plus item'), '- star item\n- plus item', 'bullets become "-"');
  const { fake, send } = await setup(tt);
  await send({ title: 'Job *nightly_backup*', body: 'Files: a_b.txt\nDone' });
  tt.same(
    fake.posted[0].body.map((b: any) => b.text),
    ['Job \\*nightly\\_backup\\*', 'Files: a\\_b.txt\n\nDone'],
  );
});

t.test('limits: a body at the declared limit is sent whole; one that escaping makes too large is cut', async (tt) => {
  const { fake, send } = await setup(tt);
  const whole = 'x'.repeat(8000);
  const r1 = await send({ body: whole });
  tt.equal(fake.posted[0].body[1].text, whole, '8,000 characters go through unchanged');
  tt.equal(r1!.detail, undefined);

  // 8,000 backslashes: each escaped (\\) and JSON-encoded (\\\\) is four bytes, 32 KB in all.
  const r2 = await send({ body: '\\'.repeat(8000) });
  const raw = fake.received.at(-1)!.raw;
  tt.ok(Buffer.byteLength(raw) <= MAX_PAYLOAD_BYTES, `${Buffer.byteLength(raw)} bytes <= ${MAX_PAYLOAD_BYTES}`);
  tt.ok(Buffer.byteLength(raw) < TEAMS_MAX_BYTES);
  tt.match(r2!.detail, /^cut \d+ characters to fit the Teams message limit$/);
  tt.ok(fake.posted.at(-1).body[1].text.endsWith('…'), 'the cut is marked');
  tt.same(fake.failedRuns, [], 'Teams accepted both');

  const r3 = await send({ body: 'y'.repeat(9000) });
  tt.equal(
    fake.posted.at(-1).body[1].text.length,
    8000,
    'a body longer than declared is cut to 8,000 with the ellipsis',
  );
  tt.match(r3!.detail, /^cut 1001 characters/);
  const r4 = await send({ locale: 'ru', body: 'я'.repeat(9000) });
  tt.match(
    r4!.detail,
    /^обрезано символов: 1001, чтобы уложиться в предел сообщения Teams$/,
    'the detail in the target language',
  );
  await send({ title: 'T'.repeat(300) });
  tt.equal(fake.posted.at(-1).body[0].text.length, 256, 'a long title is cut to 256');
});

t.test('documented errors map to the contract classes, worded in the target language', async (tt) => {
  let s = await setup(tt, (f) => f.url({ sig: 'wrong' }));
  let err = await caught(s.send());
  tt.equal(errorCode(err), 'AUTH_FAILED', '401 wrong signature');
  tt.equal(err.statusCode, 401);
  tt.match(
    err.message,
    new RegExp(
      /^Teams answered 401: The provided authentication token is not valid\. /.source +
        /\(DirectApiInvalidAuthorizationSignature\); the webhook URL or its signature was rejected/.source,
    ),
  );
  tt.notMatch(err.message, /sig=|wrong/, 'the URL is not in the message');

  s = await setup(tt, (f) => f.url({ sig: null }));
  err = await caught(s.send({ locale: 'ru' }));
  tt.equal(errorCode(err), 'AUTH_FAILED', '401 no signature');
  tt.match(
    err.message,
    /^Teams ответил 401: .*\(DirectApiAuthorizationRequired\); адрес вебхука или его подпись отклонены/,
  );

  s = await setup(tt);
  s.fake.callerAllowed = false;
  err = await caught(s.send());
  tt.equal(errorCode(err), 'AUTH_FAILED', '403 caller refused');
  tt.equal(err.statusCode, 403);

  s = await setup(tt, (f) => f.url({ workflow: 'ffffffffffffffffffffffffffffffff' }));
  err = await caught(s.send());
  tt.equal(errorCode(err), 'PERMANENT_SEND', '404 workflow gone');
  tt.match(err.message, /\(WorkflowNotFound\); the workflow or its trigger does not exist/);

  s = await setup(tt);
  s.fake.failNext = {
    status: 400,
    code: 'TriggerInputSchemaMismatch',
    message: "The input body for trigger 'manual' of type 'Request' did not match its schema definition.",
  };
  err = await caught(s.send());
  tt.equal(errorCode(err), 'PERMANENT_SEND', '400');
  tt.equal(err.statusCode, 400);
  tt.match(err.message, /^Teams answered 400: The input body .*\(TriggerInputSchemaMismatch\)$/);

  s.fake.throttle = { count: 1, retryAfter: '17' };
  err = await caught(s.send());
  tt.equal(errorCode(err), 'RATE_LIMITED', '429');
  tt.equal(err.retryAfterMs, 17_000, 'waits what Retry-After says');
  await s.send();
  tt.equal(s.fake.posted.length, 1, 'the retry goes through');

  for (const status of [500, 502, 503]) {
    s.fake.failNext = { status, code: 'InternalServerError', message: 'Encountered an internal server error.' };
    err = await caught(s.send());
    tt.equal(errorCode(err), 'RETRYABLE_SEND', `${status}`);
    tt.equal(err.statusCode, status);
  }

  await s.fake.close();
  err = await caught(s.send({ locale: 'ru' }));
  tt.equal(errorCode(err), 'RETRYABLE_SEND', 'no answer');
  tt.equal(err.statusCode, 0);
  tt.match(err.message, /^Вебхук Teams недоступен: /);
});

t.test('a destination the address policy refuses fails permanently', async (tt) => {
  const refuse = async () => {
    throw Object.assign(new Error('refused to connect to 10.0.0.5: 10.0.0.5 is a private address'), {
      code: 'OUTBOUND_REFUSED',
    });
  };
  const harness = await createTestHost({
    http: { request: refuse, fetch: refuse as typeof fetch, resolveAllowed: refuse },
  }).target(plugin, { url: `https://10.0.0.5/workflows/x/triggers/manual/paths/invoke?sig=${SIGNATURE}` });
  const err = await caught(harness.instance.send(harness.message(), { signal: harness.abort.signal, attempt: 1 }));
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.match(err.message, /^Teams webhook refused: .*private address/);
});

t.test('the signed URL is never followed to another origin', async (tt) => {
  const fake = await new TeamsWorkflowsFake().start();
  tt.teardown(() => fake.close());
  const moved = http.createServer((req, res) => res.writeHead(307, { location: `${fake.base}${req.url}` }).end());
  await new Promise<void>((r) => moved.listen(0, '127.0.0.1', r));
  tt.teardown(() => {
    moved.closeAllConnections();
    moved.close();
  });
  const url = fake.url().replace(fake.base, `http://127.0.0.1:${(moved.address() as { port: number }).port}`);
  const harness = await createTestHost().target(plugin, { url });
  const err = await caught(harness.instance.send(harness.message(), { signal: harness.abort.signal, attempt: 1 }));
  tt.match(err.message, /redirect/);
  tt.same(fake.received, [], 'the other origin saw nothing');
});

t.test(
  'following the state: no edit; a reply is a new card naming the earlier one, in English and Russian',
  async (tt) => {
    const { fake, harness, send, o } = await setup(tt);
    const first = await send({ title: 'UPS on battery', body: 'Charge 80%' });
    const previous = { messageRef: first!.messageRef!, deliveryId: 'd1', eventType: 'ups_on_battery' };
    tt.equal(
      await harness.instance.update!({ previous, message: harness.message() }, o),
      false,
      'update is not supported',
    );

    const en = await harness.instance.reply!(
      { previous, message: harness.message({ title: 'UPS back on mains', body: 'Charge 81%', severity: 'info' }) },
      o,
    );
    tt.same(fake.posted.at(-1).body.slice(0, 2), [
      { type: 'TextBlock', text: 'Update to “UPS on battery”:', wrap: true, isSubtle: true, size: 'Small' },
      { type: 'TextBlock', text: 'UPS back on mains', weight: 'Bolder', size: 'Medium', color: 'Default', wrap: true },
    ]);
    tt.same((en as any).messageRef, { title: 'UPS back on mains' });

    await harness.instance.reply!(
      {
        previous: { ...previous, messageRef: { title: 'ИБП *1* от батареи' } },
        message: harness.message({ locale: 'ru', title: 'ИБП 1 снова от сети' }),
      },
      o,
    );
    tt.equal(
      fake.posted.at(-1).body[0].text,
      'Обновление к «ИБП \\*1\\* от батареи»:',
      'Russian wording, the earlier title escaped',
    );
    tt.equal(
      await harness.instance.reply!({ previous: { ...previous, messageRef: {} }, message: harness.message() }, o),
      false,
      'nothing to name: not supported',
    );
  },
);

t.test(
  'validateConfig: a signed https Workflows URL passes; http, connectors, &amp; and unsigned URLs do not',
  async (tt) => {
    const good =
      'https://prod-12.westeurope.logic.azure.com:443/workflows/3c1e5f7a/triggers/manual/paths/invoke?' +
      'api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=AbC123';
    tt.same(checkConfig(plugin, { url: good }), []);
    tt.same(
      checkConfig(plugin, {
        url:
          'https://default0a1b.0c.environment.api.powerplatform.com:443/powerautomate/automations/direct/workflows/' +
          'abc/triggers/manual/paths/invoke?api-version=1&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=xyz',
      }),
      [],
      'the newer Power Platform form',
    );
    tt.match(checkConfig(plugin, { url: good.replace('https:', 'http:') }), [
      { path: '/url', code: 'pattern', params: { pattern: '^https://' } },
    ]);
    tt.match(
      checkConfig(plugin, { url: 'https://contoso.webhook.office.com/webhookb2/abc@def/IncomingWebhook/123/456' }),
      [{ path: '/url', code: 'connector_retired' }],
    );
    tt.match(checkConfig(plugin, { url: good.replaceAll('&', '&amp;') }), [{ path: '/url', code: 'url_html_escaped' }]);
    tt.match(checkConfig(plugin, { url: good.replace(/&sig=.*$/, '') }), [{ path: '/url', code: 'webhook_unsigned' }]);
    tt.throws(() => checkConfig(plugin, { url: 'ftp://x/' }), /invalid config/, 'the schema refuses non-http URLs');
    tt.throws(() => checkConfig(plugin, {}), /invalid config/, 'the URL is required');
  },
);
