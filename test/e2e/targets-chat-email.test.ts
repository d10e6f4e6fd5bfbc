/**
 * End to end through the real service: example webhook → tracker → chat-webhook target (Discord,
 * Slack, Mattermost formats, against a fake of the three endpoints) and → email target (a real
 * SMTP server from the smtp-server package, STARTTLS with a self-signed certificate).
 */
import t from 'tap';
import { ChatWebhookSink } from '../../plugins/target-chat-webhook/test/fakes/chat-webhook-sink.ts';
import { FakeSmtp } from '../../plugins/target-email/test/fakes/smtp.ts';
import { leaves, parseMime } from '../../plugins/target-email/test/mime.ts';
import { startService } from '../helpers/service.ts';
import { metric, plugins } from './support.ts';
import { gap, pipeline } from './targets-support.ts';

t.test('chat webhook: each format posts its own shape; 429 waits and succeeds; 404 fails for good', async (t) => {
  const chat = await new ChatWebhookSink().start();
  const s = await startService({ SERVICE_PLUGINS: plugins('herald-plugin-example', '@herald/target-chat-webhook') });
  t.teardown(async () => {
    await s.stop();
    await chat.close();
  });

  const discord = await pipeline(s, {
    kind: 'chat_webhook',
    name: 'Discord',
    config: { format: 'discord', url: chat.url('discord'), username: 'Herald' },
  });
  const slack = await pipeline(s, {
    kind: 'chat_webhook',
    name: 'Slack',
    config: { format: 'slack', url: chat.url('slack') },
  });
  const mm = await pipeline(s, {
    kind: 'chat_webhook',
    name: 'Mattermost',
    config: { format: 'mattermost', url: chat.url('mattermost'), channel: 'alerts' },
  });
  t.equal(discord.target.config.url, '********', 'the webhook URL is a secret');

  const ids = [await discord.fire('disk <sda>'), await slack.fire('disk <sda>'), await mm.fire('disk <sda>')];
  await discord.tick();
  const by = (f: string) => chat.received.filter((r) => r.format === f);
  t.equal(by('discord').length, 1);
  t.equal(by('discord')[0].query.wait, 'true');
  t.equal(by('discord')[0].body.embeds[0].title, 'Thing: disk <sda>', 'Discord: embed title from the plain title');
  t.same(by('discord')[0].body.allowed_mentions, { parse: [] }, 'never pings');
  t.equal(by('discord')[0].body.username, 'Herald');
  t.match(by('slack')[0].body.text, /^\*Thing: disk &lt;sda&gt;\*\n/, 'Slack: mrkdwn, escaped');
  t.match(by('mattermost')[0].body.text, /^\*\*Thing: disk/, 'Mattermost: markdown bold title');
  t.equal(by('mattermost')[0].body.channel, 'alerts');
  t.equal(chat.mattermostPosts.length, 1);
  for (const id of ids) t.equal((await discord.outcome(id)).event.dispatch_status, 'dispatched');

  const t0 = '2026-04-01T12:00:00.000Z';
  s.clock.set(t0);
  chat.rateLimit = { count: 1, seconds: 2.5 };
  const limitedId = await discord.fire('busy');
  await discord.tick();
  const limited = await discord.outcome(limitedId);
  t.equal(limited.delivery.status, 'queued');
  t.equal(gap(t0, limited.delivery.next_attempt_at), 2500, 'Discord retry_after (float seconds) honoured');
  s.clock.set('2026-04-01T12:00:02.500Z');
  await discord.tick();
  t.equal((await discord.outcome(limitedId)).delivery.status, 'sent', 'then delivered');
  t.equal(by('discord').at(-1)!.body.embeds[0].title, 'Thing: busy');

  const gone = await pipeline(s, {
    kind: 'chat_webhook',
    name: 'Gone',
    config: { format: 'discord', url: chat.url('discord', 'unknown') },
  });
  const goneId = await gone.fire('lost');
  await gone.tick();
  const failed = await gone.outcome(goneId);
  t.equal(failed.event.dispatch_status, 'failed');
  t.match(failed.event.details.targets[0], { status: 'failed', status_code: 404 });
  t.match(failed.event.details.targets[0].error, /Unknown Webhook/);
  const seen = chat.received.length;
  s.clock.set('2026-04-01T13:00:00.000Z');
  await gone.tick();
  t.equal(chat.received.length, seen, 'not retried');
  t.equal(await metric(s, 'service_target_send_failures_total', '{target_type="chat_webhook",status_code="429"}'), 1);
  t.equal(await metric(s, 'service_target_send_failures_total', '{target_type="chat_webhook",status_code="404"}'), 1);
});

t.test('email: multipart text and HTML over STARTTLS; a refused login fails without retry', async (t) => {
  const smtp = await new FakeSmtp({ users: { herald: 'smtp-pass-e2e-1' } }).start();
  const s = await startService({ SERVICE_PLUGINS: plugins('herald-plugin-example', '@herald/target-email') });
  t.teardown(async () => {
    await s.stop();
    await smtp.close();
  });
  const base = {
    host: '127.0.0.1',
    port: smtp.port,
    security: 'starttls',
    allow_self_signed: true,
    username: 'herald',
    from: 'Herald <herald@example.org>',
    to: ['ops@example.org'],
    subject_prefix: '[Herald]',
  };

  const mail = await pipeline(s, { kind: 'email', name: 'Mail', config: { ...base, password: 'smtp-pass-e2e-1' } });
  const id = await mail.fire('<b>door</b> open', { note: 'line two' });
  await mail.tick();
  t.equal((await mail.outcome(id)).event.dispatch_status, 'dispatched');
  t.equal(smtp.received.length, 1);
  const got = smtp.received[0];
  t.equal(got.secure, true, 'STARTTLS was used');
  t.equal(got.user, 'herald', 'logged in');
  t.same(got.to, ['ops@example.org']);
  const root = parseMime(got.raw);
  t.equal(root.headers.get('subject'), '[Herald] Thing: <b>door</b> open');
  const parts = leaves(root);
  const plain = parts.find((p) => p.type === 'text/plain');
  const html = parts.find((p) => p.type === 'text/html');
  t.ok(plain && html, `text and HTML parts (${parts.map((p) => p.type).join(', ')})`);
  t.match(plain!.body, /<b>door<\/b> open happened \(line two\)/, 'plain text as written');
  t.match(html!.body, /&lt;b&gt;door&lt;\/b&gt; open/, 'HTML escaped');

  const wrong = await pipeline(s, { kind: 'email', name: 'Wrong', config: { ...base, password: 'not-the-password' } });
  const badId = await wrong.fire('nobody hears');
  await wrong.tick();
  const failed = await wrong.outcome(badId);
  t.equal(failed.event.dispatch_status, 'failed');
  t.equal(failed.delivery.status, 'failed', 'a rejected login is permanent');
  t.match(failed.delivery.last_error, /535|auth/i);
  t.notMatch(JSON.stringify(failed), /not-the-password/, 'the password is not in the error');
  const attempts = smtp.authAttempts.length;
  s.clock.set(new Date(Date.now() + 3_600_000));
  await wrong.tick();
  t.equal(smtp.authAttempts.length, attempts, 'not retried');
  t.equal(smtp.received.length, 1, 'nothing sent with the wrong login');
});
