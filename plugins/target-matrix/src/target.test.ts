import http from 'node:http';
import { registerHooks } from 'node:module';
import { errorCode, secretPaths } from '@herald/plugin-api';
import { createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import { FakeHomeserver } from '../test/fakes/matrix.ts';
import plugin, { transactionId } from './index.ts';

// Every module this process resolves from matrix-js-sdk or its crypto: a plain room must load none.
const sdkLoads: string[] = [];
registerHooks({
  resolve(specifier, context, next) {
    if (/^(matrix-js-sdk|@matrix-org\/)/.test(specifier)) sdkLoads.push(specifier);
    return next(specifier, context);
  },
});

const ROOM = '!alerts:example.org';
const TOKEN = 'syt_aGVyYWxk_SeCrEtToKeN_1a2b3c';

async function setup(tt: any, o: { token?: string; joined?: boolean; url?: string } = {}) {
  const hs = await new FakeHomeserver().start();
  tt.teardown(() => hs.close());
  hs.addUser('@herald:example.org', TOKEN, o.joined === false ? [] : [ROOM]);
  const harness = await createTestHost().target(plugin, {
    homeserver_url: o.url ?? hs.url,
    access_token: o.token ?? TOKEN,
    room_id: ROOM,
  });
  const send = (m = {}) =>
    harness.instance.send(harness.message(m, { fit: false }), { signal: harness.abort.signal, attempt: 1 });
  return { hs, harness, send };
}

const caught = (p: unknown) =>
  Promise.resolve(p).then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as any,
  );

t.test('manifest: html, limits, secret token', async (tt) => {
  tt.same(plugin.manifest.limits?.formats, ['html']);
  tt.equal(plugin.manifest.limits?.maxMessageLength, 16_000);
  tt.same(secretPaths(plugin.manifest.configSchema), ['access_token']);
});

t.test('start validates the token with whoami', async (tt) => {
  const { hs, harness } = await setup(tt);
  await harness.instance.start!();
  tt.same(await harness.instance.health!(), { status: 'ok', detail: 'posting as @herald:example.org' });
  tt.same(hs.requests[0], {
    method: 'GET',
    path: '/_matrix/client/v3/account/whoami',
    authorization: `Bearer ${TOKEN}`,
  });

  const bad = await setup(tt, { token: 'syt_revoked' });
  const err = await caught(bad.harness.instance.start!());
  tt.equal(errorCode(err), 'AUTH_FAILED');
  tt.match(err.message, /M_UNKNOWN_TOKEN/);
  tt.equal((await bad.harness.instance.health!()).status, 'error');

  const notMatrix = await setup(tt, { url: `${hs.url}/not-here` });
  tt.equal(
    errorCode(await caught(notMatrix.harness.instance.start!())),
    'CONFIG',
    'a URL that is not a homeserver is a config error',
  );

  const down = await setup(tt);
  await down.hs.close();
  tt.equal(
    errorCode(await caught(down.harness.instance.start!())),
    'NOT_READY',
    'unreachable homeserver: retry in the background',
  );
});

t.test('sends an m.notice with plain body and HTML formatted_body', async (tt) => {
  const { hs, send } = await setup(tt);
  const result = await send({
    deliveryId: 'del-1',
    title: 'Backup <b>done</b>',
    plainTitle: 'Backup done',
    body: 'Files: <code>42</code>\nSize: 3 GB',
    plainBody: 'Files: 42\nSize: 3 GB',
    url: 'https://nas.example/jobs?id=1&x=2',
  });
  tt.equal(hs.events.length, 1);
  const ev = hs.events[0]!;
  tt.equal(ev.type, 'm.room.message');
  tt.equal(ev.room_id, ROOM);
  tt.equal(ev.txnId, transactionId('del-1'));
  tt.same(ev.content, {
    msgtype: 'm.notice',
    body: 'Backup done\n\nFiles: 42\nSize: 3 GB\n\nhttps://nas.example/jobs?id=1&x=2',
    format: 'org.matrix.custom.html',
    formatted_body:
      '<strong>Backup <b>done</b></strong><br><br>Files: <code>42</code><br>Size: 3 GB<br><br><a ' +
      'href="https://nas.example/jobs?id=1&amp;x=2">https://nas.example/jobs?id=1&amp;x=2</a>',
  });
  tt.same(
    result,
    { remoteId: ev.event_id, detail: undefined, messageRef: { room_id: ROOM, event_id: ev.event_id } },
    'the event id to edit it later',
  );
  tt.equal(
    hs.requests.at(-1)!.path,
    `/_matrix/client/v3/rooms/${encodeURIComponent(ROOM)}/send/m.room.message/${ev.txnId}`,
  );
});

t.test('HTML with block structure keeps its own line breaks', async (tt) => {
  const { hs, send } = await setup(tt);
  await send({ title: 'T', body: '<p>one</p>\n<ul><li>a</li></ul>' });
  tt.equal(hs.events[0]!.content.formatted_body, '<strong>T</strong><br><br><p>one</p>\n<ul><li>a</li></ul>');
});

t.test('a retried delivery is deduplicated by the homeserver', async (tt) => {
  const { hs, send } = await setup(tt);
  hs.loseNextResponse = true;
  const err = await caught(send({ deliveryId: 'del-retry' }));
  tt.equal(errorCode(err), 'RETRYABLE_SEND', 'a lost answer is retryable');
  tt.equal(hs.events.length, 1, 'but the event was stored');
  const again = await send({ deliveryId: 'del-retry' });
  tt.equal(hs.events.length, 1, 'the retry posts nothing new');
  tt.equal((again as any).remoteId, hs.events[0]!.event_id, 'and reports the same event');
  await send({ deliveryId: 'del-other' });
  tt.equal(hs.events.length, 2, 'another delivery is another event');
  tt.equal(transactionId('del-retry'), transactionId('del-retry'));
  tt.not(transactionId('del-retry'), transactionId('del-other'));
});

t.test('rate limit becomes RateLimitedError with retry_after_ms', async (tt) => {
  const { hs, send } = await setup(tt);
  hs.rateLimit = { count: 1, ms: 2_345 };
  const err = await caught(send());
  tt.equal(errorCode(err), 'RATE_LIMITED');
  tt.equal(err.retryAfterMs, 2_345);
  tt.match(err.message, /M_LIMIT_EXCEEDED/);
  await send();
  tt.equal(hs.events.length, 1);
});

t.test('a revoked token is an auth failure and never leaks', async (tt) => {
  const { harness, hs } = await setup(tt);
  hs.tokens.clear();
  const err = await caught(harness.instance.send(harness.message(), { signal: harness.abort.signal, attempt: 1 }));
  tt.equal(errorCode(err), 'AUTH_FAILED');
  tt.notMatch(err.message, /SeCrEtToKeN/);
  tt.notMatch(JSON.stringify(harness.log.lines), /SeCrEtToKeN/);
  tt.equal((await harness.instance.health!()).status, 'error');
});

t.test('not in the room is permanent', async (tt) => {
  const { send } = await setup(tt, { joined: false });
  const err = await caught(send());
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.equal(err.statusCode, 403);
  tt.match(err.message, /M_FORBIDDEN: User @herald:example.org not in room/);
});

t.test('5xx and network failures are retryable', async (tt) => {
  const { hs, send } = await setup(tt);
  hs.badGatewayNext = true;
  const err = await caught(send());
  tt.equal(errorCode(err), 'RETRYABLE_SEND');
  tt.equal(err.statusCode, 502);
  await hs.close();
  const down = await caught(send());
  tt.equal(errorCode(down), 'RETRYABLE_SEND');
  tt.equal(down.statusCode, 0);
});

t.test('a message too big for one event goes out as plain text that fits', async (tt) => {
  const { hs, send } = await setup(tt);
  const cyrillic = 'Ж'.repeat(16_000);
  const result = await send({ title: 'Отчёт', plainTitle: 'Отчёт', body: `<i>${cyrillic}</i>`, plainBody: cyrillic });
  const content = hs.events[0]!.content;
  tt.equal(content.format, undefined, 'no HTML copy');
  tt.equal(content.body, `Отчёт\n\n${cyrillic}`, 'the plain copy alone fits whole');
  tt.match(result, { detail: /plain text/ });

  // Beyond the declared limit (a pipeline that did not fit the body): cut by bytes.
  const huge = 'Ж'.repeat(40_000);
  tt.match(await send({ title: 'T', plainTitle: 'T', body: huge, plainBody: huge }), {
    detail: /plain text, cut to fit/,
  });
  const cut = hs.events[1]!.content;
  tt.ok(cut.body.startsWith('T\n\nЖЖЖ'));
  tt.ok(cut.body.endsWith('…'));
  tt.ok(Buffer.byteLength(JSON.stringify(cut)) <= 60_000, 'fits the content budget');
  tt.ok(Buffer.byteLength(JSON.stringify(cut)) > 59_000, 'and uses it');
});

t.test('the access token stays on its origin when homeserver_url redirects to another one', async (tt) => {
  const hs = await new FakeHomeserver().start();
  tt.teardown(() => hs.close());
  hs.addUser('@herald:example.org', TOKEN, [ROOM]);
  // homeserver_url answers every request with 302 to the same path on the real homeserver (another origin).
  const firstSaw: (string | undefined)[] = [];
  const moved = http.createServer((req, res) => {
    firstSaw.push(req.headers.authorization);
    res.writeHead(302, { location: `${hs.url}${req.url}` }).end();
  });
  await new Promise<void>((r) => moved.listen(0, '127.0.0.1', r));
  tt.teardown(() => {
    moved.closeAllConnections();
    moved.close();
  });
  const harness = await createTestHost().target(plugin, {
    homeserver_url: `http://127.0.0.1:${(moved.address() as { port: number }).port}`,
    access_token: TOKEN,
    room_id: ROOM,
  });

  const err = await caught(harness.instance.start!());
  tt.equal(errorCode(err), 'AUTH_FAILED', 'whoami follows the redirect and arrives without the token');
  tt.match(err.message, /M_MISSING_TOKEN/);
  tt.same(
    hs.requests,
    [{ method: 'GET', path: '/_matrix/client/v3/account/whoami', authorization: undefined }],
    'the second origin never saw the token',
  );
  tt.same(firstSaw, [`Bearer ${TOKEN}`]);

  // Sends refuse redirects outright: the message body does not travel either.
  const sendErr = await caught(harness.instance.send(harness.message(), { signal: harness.abort.signal, attempt: 1 }));
  tt.equal(errorCode(sendErr), 'RETRYABLE_SEND');
  tt.match(sendErr.message, /redirect/);
  tt.equal(hs.requests.length, 1, 'the send never reached the second origin');
  tt.equal(hs.events.length, 0);
});

t.test(
  'update: an m.replace edit relating to the original event, idempotent per delivery; another room is not supported',
  async (tt) => {
    const { hs, harness, send } = await setup(tt);
    const o = { signal: harness.abort.signal, attempt: 1 };
    const first = await send({ deliveryId: 'd1', title: 'UPS on battery', body: 'Charge 80%' });
    const previous = { messageRef: first!.messageRef!, deliveryId: 'd1', eventType: 'ups_on_battery' };
    const edit = harness.message({
      deliveryId: 'd2',
      title: 'UPS back on line',
      plainTitle: 'UPS back on line',
      body: 'Charge 81%',
      plainBody: 'Charge 81%',
    });
    const r = await harness.instance.update!({ previous, message: edit }, o);
    tt.equal(hs.events.length, 2);
    const ev = hs.events[1]!;
    tt.same(ev.content['m.relates_to'], { rel_type: 'm.replace', event_id: first!.messageRef!.event_id });
    tt.same(ev.content['m.new_content'], {
      msgtype: 'm.notice',
      body: 'UPS back on line\n\nCharge 81%',
      format: 'org.matrix.custom.html',
      formatted_body: '<strong>UPS back on line</strong><br><br>Charge 81%',
    });
    tt.equal(ev.content.body, '* UPS back on line\n\nCharge 81%', 'a fallback for clients without edits');
    tt.same(
      (r as { messageRef?: unknown }).messageRef,
      first!.messageRef,
      'later edits relate to the original event too',
    );
    await harness.instance.update!({ previous, message: edit }, o);
    tt.equal(hs.events.length, 2, 'a retried edit reuses its transaction: nothing new');
    tt.equal(
      await harness.instance.update!(
        { previous: { ...previous, messageRef: { room_id: '!other:example.org', event_id: '$x' } }, message: edit },
        o,
      ),
      false,
    );
    const err = await caught(
      harness.instance.update!(
        {
          previous: { ...previous, messageRef: { room_id: ROOM, event_id: '$gone' } },
          message: harness.message({ deliveryId: 'd3' }),
        },
        o,
      ),
    );
    tt.equal(errorCode(err), 'PERMANENT_SEND', 'an edit the homeserver refuses is permanent (the core falls back)');
  },
);

t.test('plain rooms never load matrix-js-sdk', async (tt) => {
  const { harness, send } = await setup(tt);
  await harness.instance.start!();
  await send();
  tt.same(sdkLoads, [], 'nothing of matrix-js-sdk was resolved by any test of a plain room');
  await import('matrix-js-sdk/lib/logger.js');
  tt.same(sdkLoads, ['matrix-js-sdk/lib/logger.js'], 'the hook does see an import of it');
});
