/**
 * `POST /api/targets/from-url`: an Apprise URL becomes a target of the kind Herald has for that
 * service, validated like any target; a URL it cannot map is refused naming the scheme, and nothing
 * is created then.
 */
import t from 'tap';
import { startService, TEST_PLUGINS } from '../helpers/service.ts';

const PLUGINS = [TEST_PLUGINS, '@herald/target-chat-webhook', '@herald/target-email', '@herald/target-ntfy'].join(',');

t.test('an Apprise URL becomes a target; an unmappable one is refused and nothing is made', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  t.teardown(() => s.stop());
  const token = s.admin.token;
  const targets = async () => (await s.request('GET', '/api/targets', { token })).body.targets as any[];

  const discord = await s.request('POST', '/api/targets/from-url', {
    token,
    body: { url: 'discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js', locale: 'ru' },
  });
  t.equal(discord.status, 201, discord.text);
  t.match(discord.body, {
    kind: 'chat_webhook',
    name: 'Discord',
    locale: 'ru',
    enabled: true,
    config: { format: 'discord' },
  });
  t.not(
    discord.body.config.url,
    'https://discord.com/api/webhooks/4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js',
    'the webhook URL is a secret: masked',
  );
  const stored = await s.service.core.db.get('SELECT config FROM targets WHERE id = ?', [discord.body.id]);
  t.match(String(stored!.config), /enc:v1:/, 'and sealed at rest');

  const ntfy = await s.request('POST', '/api/targets/from-url', {
    token,
    body: { url: 'ntfys://ntfy.example.org/backups?token=tk_abcdef', name: 'Phone' },
  });
  t.equal(ntfy.status, 201, ntfy.text);
  t.match(ntfy.body, { kind: 'ntfy', name: 'Phone', locale: 'en', config: { server_url: 'https://ntfy.example.org' } });
  t.not(ntfy.body.config.topic, 'backups', 'an ntfy topic is a secret: masked');
  t.same([...ntfy.body.secrets_set].sort(), ['token', 'topic'], 'the topic and the token were stored');

  const mail = await s.request('POST', '/api/targets/from-url', {
    token,
    body: { url: 'mailtos://nas:secret@example.org?to=me@example.org' },
  });
  t.equal(mail.status, 201, mail.text);
  t.match(mail.body.config, {
    host: 'example.org',
    security: 'starttls',
    from: 'nas@example.org',
    to: ['me@example.org'],
  });

  const count = (await targets()).length;
  const unknown = await s.request('POST', '/api/targets/from-url', { token, body: { url: 'pushbullet://o.abcdef' } });
  t.equal(unknown.status, 422);
  t.equal(unknown.body.code, 'apprise_scheme_unsupported');
  t.same(unknown.body.params, { scheme: 'pushbullet' });
  t.match(unknown.body.detail, /no target for Apprise's pushbullet:\/\/ URLs/);

  const badTopic = await s.request('POST', '/api/targets/from-url', {
    token,
    body: { url: 'ntfys://ntfy.example.org/no%20spaces%20here' },
  });
  t.equal(badTopic.status, 422, "the plugin's own validation applies");

  const notEnabled = await s.request('POST', '/api/targets/from-url', {
    token,
    body: { url: 'gotifys://push.example.org/AbCdEf' },
  });
  t.equal(notEnabled.status, 422);
  t.equal(notEnabled.body.code, 'unknown_kind');
  t.equal((await targets()).length, count, 'no half-made target');

  const anon = await s.request('POST', '/api/targets/from-url', { body: { url: 'ntfy://x' } });
  t.equal(anon.status, 401);
});

t.test('parse-url reads a URL for the form without creating anything', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: PLUGINS });
  t.teardown(() => s.stop());
  const token = s.admin.token;
  const r = await s.request('POST', '/api/targets/parse-url', {
    token,
    body: { url: 'ntfy://me:pw@ntfy.lan:8080/backups' },
  });
  t.equal(r.status, 200, r.text);
  t.same(r.body, {
    kind: 'ntfy',
    config: { server_url: 'http://ntfy.lan:8080', topic: 'backups', username: 'me', password: 'pw' },
    name: 'ntfy backups',
    kind_enabled: true,
  });
  const off = await s.request('POST', '/api/targets/parse-url', { token, body: { url: 'pover://u@t' } });
  t.equal(off.body.kind_enabled, false, 'a kind this service has not enabled is said so');
  const bad = await s.request('POST', '/api/targets/parse-url', { token, body: { url: 'nope://x' } });
  t.equal(bad.status, 422);
  t.equal(bad.body.code, 'apprise_scheme_unsupported');
  t.same((await s.request('GET', '/api/targets', { token })).body.targets, [], 'nothing created');
});
