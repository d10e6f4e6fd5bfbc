import http from 'node:http';
import { errorCode, secretPaths } from '@herald/plugin-api';
import { createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import type { SinkFormat } from '../test/fakes/chat-webhook-sink.ts';
import { ChatWebhookSink } from '../test/fakes/chat-webhook-sink.ts';
import plugin, { IDEMPOTENCY_HEADER } from './index.ts';

const FORMATS: SinkFormat[] = ['discord', 'slack', 'mattermost'];

async function setup(
  tt: any,
  format: SinkFormat,
  extra: Record<string, unknown> = {},
  variant: 'valid' | 'bad-token' | 'unknown' = 'valid',
) {
  const sink = await new ChatWebhookSink().start();
  tt.teardown(() => sink.close());
  const host = createTestHost();
  const harness = await host.target(plugin, { format, url: sink.url(format, variant), ...extra });
  const send = (m = {}) => harness.instance.send(harness.message(m), { signal: harness.abort.signal, attempt: 1 });
  return { sink, harness, send };
}

const caught = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as any,
  );

t.test('manifest declares limits, format and the secret URL', async (tt) => {
  const m = plugin.manifest;
  tt.equal(m.kind, 'target');
  tt.same(m.limits?.formats, ['markdown']);
  tt.equal(m.limits?.maxMessageLength, 4000, 'the strictest service limit (Slack)');
  tt.equal(m.limits?.maxTitleLength, 256, 'Discord embed title');
  tt.same(secretPaths(m.configSchema), ['url']);
});

t.test('discord: embed with title, markdown body, link, username and thread', async (tt) => {
  const { sink, send } = await setup(tt, 'discord', {
    username: 'Herald',
    icon_url: 'https://example.org/i.png',
    thread_id: '123456',
  });
  const result = await send({
    title: 'Backup **done**',
    plainTitle: 'Backup done',
    body: 'All *42* files',
    url: 'https://nas.example/job/1',
    severity: 'critical',
  });
  const got = sink.received[0]!;
  tt.same(got.query, { wait: 'true', thread_id: '123456' });
  tt.same(got.body.allowed_mentions, { parse: [] }, 'mentions are never parsed');
  tt.equal(got.body.username, 'Herald');
  tt.equal(got.body.avatar_url, 'https://example.org/i.png');
  tt.same(got.body.embeds, [
    { color: 0xdc2626, title: 'Backup done', description: 'All *42* files', url: 'https://nas.example/job/1' },
  ]);
  tt.match(result, { remoteId: /^\d+$/ }, 'the Discord message id is the remote id');
});

t.test('slack: mrkdwn text built from the plain text, escaped', async (tt) => {
  const { sink, send } = await setup(tt, 'slack', { username: 'Herald' });
  await send({ plainTitle: 'Disk <sda> & more', plainBody: 'Usage 91% on /data', url: 'https://nas.example/disks' });
  tt.same(sink.received[0]!.body, {
    text: '*Disk &lt;sda&gt; &amp; more*\nUsage 91% on /data\n<https://nas.example/disks>',
    mrkdwn: true,
    username: 'Herald',
  });
});

t.test('mattermost: markdown text, channel override and delivery props', async (tt) => {
  const { sink, send } = await setup(tt, 'mattermost', { channel: 'alerts', icon_url: 'https://example.org/i.png' });
  const m = {
    deliveryId: 'del-xyz',
    eventType: 'backup_done',
    title: 'Backup **done**',
    body: 'All files\n\n- a\n- b',
  };
  await send(m);
  tt.same(sink.received[0]!.body, {
    text: '**Backup **done****\n\nAll files\n\n- a\n- b',
    icon_url: 'https://example.org/i.png',
    channel: 'alerts',
    props: { herald_delivery_id: 'del-xyz', herald_event_type: 'backup_done' },
  });
  tt.equal(sink.mattermostPosts.length, 1);
});

t.test('over-long messages are cut to the service limit, never split', async (tt) => {
  const limits = { discord: 4096, slack: 4000, mattermost: 16383 };
  for (const format of FORMATS) {
    const { sink, send } = await setup(tt, format);
    const long = 'x'.repeat(30_000);
    const result = await send({ body: long, plainBody: long, plainTitle: 'T'.repeat(400), title: 'T'.repeat(400) });
    tt.equal(sink.received.length, 1, `${format}: one request`);
    const body = sink.received[0]!.body;
    const text: string = format === 'discord' ? body.embeds[0].description : body.text;
    tt.ok(text.length <= limits[format], `${format}: ${text.length} <= ${limits[format]}`);
    tt.ok(text.endsWith('…'), `${format}: the cut is marked`);
    if (format === 'discord') tt.equal(body.embeds[0].title.length, 256);
    tt.match(result, { detail: /^cut \d+ characters/ }, `${format}: the result says so`);
    if (format === 'mattermost') tt.equal(sink.mattermostPosts.length, 1, 'stays one Mattermost post');
  }
});

t.test('429 becomes RateLimitedError with the service-given delay', async (tt) => {
  const expected = { discord: 1_250, slack: 7_000, mattermost: 3_000 };
  for (const format of FORMATS) {
    const { sink, send } = await setup(tt, format);
    sink.rateLimit = { count: 1, seconds: expected[format] / 1000 };
    const err = await caught(send());
    tt.equal(errorCode(err), 'RATE_LIMITED', format);
    tt.equal(err.retryAfterMs, expected[format], `${format}: waits ${expected[format]} ms`);
    await send();
    tt.equal(sink.received.length, 2, `${format}: the retry goes through`);
  }
});

t.test('5xx and network failures are retryable', async (tt) => {
  for (const format of FORMATS) {
    const { sink, send } = await setup(tt, format);
    sink.failNext = 500;
    const err = await caught(send());
    tt.equal(errorCode(err), 'RETRYABLE_SEND', format);
    tt.equal(err.statusCode, 500);
  }
  const { sink, harness } = await setup(tt, 'slack');
  await sink.close();
  const err = await caught(harness.instance.send(harness.message(), { signal: harness.abort.signal, attempt: 1 }));
  tt.equal(errorCode(err), 'RETRYABLE_SEND');
  tt.equal(err.statusCode, 0, 'no HTTP answer');
  tt.notMatch(err.message, /sLaCkSeCrEt/, 'the secret URL is not in the error');
});

t.test('unknown webhooks and channels are permanent, revoked credentials are auth failures', async (tt) => {
  let err = await caught((await setup(tt, 'discord', {}, 'unknown')).send());
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.equal(err.statusCode, 404);
  tt.match(err.message, /Unknown Webhook \(10015\)/);

  err = await caught((await setup(tt, 'slack', {}, 'unknown')).send());
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.match(err.message, /404: no_service/);

  err = await caught((await setup(tt, 'mattermost', { channel: 'gone' })).send());
  tt.equal(errorCode(err), 'PERMANENT_SEND', 'Mattermost channel not found');
  tt.equal(err.statusCode, 404);

  err = await caught((await setup(tt, 'discord', {}, 'bad-token')).send());
  tt.equal(errorCode(err), 'AUTH_FAILED', 'Discord 401 Invalid Webhook Token');
  tt.notMatch(err.message, /dIsCoRd-ToKeN/);

  err = await caught((await setup(tt, 'slack', {}, 'bad-token')).send());
  tt.equal(errorCode(err), 'AUTH_FAILED', 'Slack 403 invalid_token');

  err = await caught((await setup(tt, 'mattermost', {}, 'unknown')).send());
  tt.equal(errorCode(err), 'AUTH_FAILED', 'Mattermost 400 invalid webhook');
});

t.test('a webhook pointing at a refused address fails permanently', async (tt) => {
  // The core client's refusal, as a plugin sees it (code OUTBOUND_REFUSED).
  const refuse = async () => {
    throw Object.assign(new Error('refused to connect to 127.0.0.1: 127.0.0.1 is a loopback address'), {
      code: 'OUTBOUND_REFUSED',
    });
  };
  const host = createTestHost({ http: { request: refuse, fetch: refuse as typeof fetch, resolveAllowed: refuse } });
  const harness = await host.target(plugin, { format: 'slack', url: 'http://127.0.0.1:9/services/T/B/secret' });
  const err = await caught(harness.instance.send(harness.message(), { signal: harness.abort.signal, attempt: 1 }));
  tt.equal(errorCode(err), 'PERMANENT_SEND');
  tt.match(err.message, /loopback/);
});

t.test('every post carries the delivery id as Idempotency-Key, the same on a retry', async (tt) => {
  tt.equal(IDEMPOTENCY_HEADER, 'idempotency-key');
  for (const format of FORMATS) {
    const { sink, harness } = await setup(tt, format);
    const message = harness.message({ deliveryId: `del-${format}-1` });
    sink.failNext = 503;
    await caught(harness.instance.send(message, { signal: harness.abort.signal, attempt: 1 }));
    await harness.instance.send(message, { signal: harness.abort.signal, attempt: 2 });
    tt.same(
      sink.received.map((r) => r.idempotencyKey),
      [`del-${format}-1`, `del-${format}-1`],
      `${format}: the attempt and its retry carry one key`,
    );
  }
});

t.test('the webhook URL (the credential) is never followed to another origin', async (tt) => {
  for (const format of FORMATS) {
    const sink = await new ChatWebhookSink().start();
    tt.teardown(() => sink.close());
    // The configured URL answers 302 to the same path on the sink, another origin: the path carries the webhook's
    // secret.
    const moved = http.createServer((req, res) => res.writeHead(302, { location: `${sink.base}${req.url}` }).end());
    await new Promise<void>((r) => moved.listen(0, '127.0.0.1', r));
    tt.teardown(() => {
      moved.closeAllConnections();
      moved.close();
    });
    const url = sink.url(format).replace(sink.base, `http://127.0.0.1:${(moved.address() as { port: number }).port}`);
    const harness = await createTestHost().target(plugin, { format, url });
    const err = await caught(harness.instance.send(harness.message(), { signal: harness.abort.signal, attempt: 1 }));
    tt.match(err.message, /redirect/, `${format}: the redirect is refused`);
    tt.same(sink.received, [], `${format}: the second origin saw nothing`);
  }
});

t.test(
  'discord: update edits the webhook message (PATCH …/messages/{id}); an unknown message is permanent',
  async (tt) => {
    const { sink, harness, send } = await setup(tt, 'discord', { username: 'Herald', thread_id: '123456' });
    const o = { signal: harness.abort.signal, attempt: 1 };
    const first = await send({ plainTitle: 'Build failed', body: 'run 12' });
    tt.match(first!.messageRef, { format: 'discord', message_id: /^\d+$/ });
    const previous = { messageRef: first!.messageRef!, deliveryId: 'd1', eventType: 'workflow_run_failed' };
    const r = await harness.instance.update!(
      { previous, message: harness.message({ plainTitle: 'Build fixed', body: 'run 12 passed', severity: 'info' }) },
      o,
    );
    const patch = sink.received.at(-1)!;
    tt.equal(patch.method, 'PATCH');
    tt.equal(patch.path, `${new URL(sink.url('discord')).pathname}/messages/${first!.messageRef!.message_id}`);
    tt.same(patch.query, { thread_id: '123456' }, 'in the webhook thread');
    tt.notOk('username' in patch.body, 'an edit cannot change the name');
    tt.same(sink.discordMessages.get(String(first!.messageRef!.message_id))!.embeds[0].title, 'Build fixed');
    tt.same((r as { messageRef?: unknown }).messageRef, first!.messageRef);
    const err = await caught(
      harness.instance.update!(
        { previous: { ...previous, messageRef: { format: 'discord', message_id: '1' } }, message: harness.message() },
        o,
      ) as Promise<unknown>,
    );
    tt.equal(errorCode(err), 'PERMANENT_SEND');
    tt.equal(
      await harness.instance.reply!({ previous, message: harness.message() }, o),
      false,
      'Discord edits, it does not reply',
    );
  },
);

t.test(
  'slack and mattermost cannot edit: the reply is a new post naming the earlier one, in the target language',
  async (tt) => {
    for (const format of ['slack', 'mattermost'] as const) {
      const { sink, harness, send } = await setup(tt, format);
      const o = { signal: harness.abort.signal, attempt: 1 };
      const first = await send({ title: 'UPS on battery', plainTitle: 'UPS on battery' });
      tt.same(first!.messageRef, { format, title: 'UPS on battery' });
      const previous = { messageRef: first!.messageRef!, deliveryId: 'd1', eventType: 'ups_on_battery' };
      tt.equal(
        await harness.instance.update!({ previous, message: harness.message() }, o),
        false,
        `${format}: no edit`,
      );
      await harness.instance.reply!(
        {
          previous,
          message: harness.message({
            locale: 'ru',
            title: 'ИБП снова от сети',
            plainTitle: 'ИБП снова от сети',
            body: 'Заряд 90%',
            plainBody: 'Заряд 90%',
          }),
        },
        o,
      );
      const text: string = sink.received.at(-1)!.body.text;
      tt.match(
        text,
        format === 'slack'
          ? /^_Обновление к «UPS on battery»:_\n\*ИБП снова от сети\*\nЗаряд 90%$/
          : /^_Обновление к «UPS on battery»:_\n\n\*\*ИБП снова от сети\*\*\n\nЗаряд 90%$/,
      );
      if (format === 'mattermost') tt.equal(sink.received.at(-1)!.body.props.herald_update, true);
    }
  },
);
