import t from 'tap';
import { APPRISE_SCHEMES, importAppriseUrl } from './apprise-url.ts';

const read = (url: string) => {
  const r = importAppriseUrl(url);
  return { kind: r.kind, config: r.config, ...(r.botToken ? { botToken: r.botToken } : {}) };
};
const refusal = (url: string) => {
  try {
    importAppriseUrl(url);
  } catch (err) {
    return { code: (err as { code: string }).code, message: (err as Error).message };
  }
  throw new Error(`${url} was read`);
};

t.test('each scheme becomes its target kind and config', async (t) => {
  t.same(read('tgram://123456789:AAH-abc_def/-1001234567890'), {
    kind: 'telegram',
    config: { chat_id: '-1001234567890' },
    botToken: '123456789:AAH-abc_def',
  });
  t.same(read('discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js'), {
    kind: 'chat_webhook',
    config: { format: 'discord', url: 'https://discord.com/api/webhooks/4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js' },
  });
  t.same(read('slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7F/#general'), {
    kind: 'chat_webhook',
    config: { format: 'slack', url: 'https://hooks.slack.com/services/T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7F' },
  });
  t.same(read('mmosts://chat.example.org/3ccdd113474722377935511fc85d3dd4?channel=ops'), {
    kind: 'chat_webhook',
    config: {
      format: 'mattermost',
      url: 'https://chat.example.org/hooks/3ccdd113474722377935511fc85d3dd4',
      channel: 'ops',
    },
  });
  t.same(read('mmost://chat.lan:8065/team/3ccdd113'), {
    kind: 'chat_webhook',
    config: { format: 'mattermost', url: 'http://chat.lan:8065/team/hooks/3ccdd113' },
  });
  t.same(read('mailtos://nas:app%20pass@example.org?smtp=smtp.example.org&to=me@example.org,you@example.org'), {
    kind: 'email',
    config: {
      host: 'smtp.example.org',
      security: 'starttls',
      username: 'nas',
      password: 'app pass',
      from: 'nas@example.org',
      to: ['me@example.org', 'you@example.org'],
    },
  });
  t.same(read('mailtos://user:pw@example.org:465'), {
    kind: 'email',
    config: {
      host: 'example.org',
      port: 465,
      security: 'tls',
      username: 'user',
      password: 'pw',
      from: 'user@example.org',
      to: ['user@example.org'],
    },
  });
  t.same(read('mailto://relay.lan?from=nas@lan&to=me@example.org'), {
    kind: 'email',
    config: { host: 'relay.lan', security: 'none', from: 'nas@lan', to: ['me@example.org'] },
  });
  t.same(read('matrixs://syt_token123@matrix.example.org/!room:example.org'), {
    kind: 'matrix',
    config: {
      homeserver_url: 'https://matrix.example.org',
      access_token: 'syt_token123',
      room_id: '!room:example.org',
    },
  });
  t.same(read('matrix://bot:syt_tok@hs.lan:8008/#alerts:hs.lan'), {
    kind: 'matrix',
    config: { homeserver_url: 'http://hs.lan:8008', access_token: 'syt_tok', room_id: '#alerts:hs.lan' },
  });
  t.same(read('ntfy://herald_alerts'), {
    kind: 'ntfy',
    config: { server_url: 'https://ntfy.sh', topic: 'herald_alerts' },
  });
  t.same(read('ntfys://ntfy.example.org/backups'), {
    kind: 'ntfy',
    config: { server_url: 'https://ntfy.example.org', topic: 'backups' },
  });
  t.same(read('ntfy://me:secret@ntfy.lan:8080/backups'), {
    kind: 'ntfy',
    config: { server_url: 'http://ntfy.lan:8080', topic: 'backups', username: 'me', password: 'secret' },
  });
  t.same(read('ntfys://ntfy.example.org/backups?token=tk_abc'), {
    kind: 'ntfy',
    config: { server_url: 'https://ntfy.example.org', topic: 'backups', token: 'tk_abc' },
  });
  t.same(read('gotifys://push.example.org/gotify/AbCdEf123'), {
    kind: 'gotify',
    config: { server_url: 'https://push.example.org/gotify', app_token: 'AbCdEf123' },
  });
  t.same(read('gotify://192.168.1.5:8080/AbCdEf123'), {
    kind: 'gotify',
    config: { server_url: 'http://192.168.1.5:8080', app_token: 'AbCdEf123' },
  });
  t.same(read('pover://uQiRzpo4DXghDmr9QzzfQu27cmVRsG@azGDORePK8gMaC0QOYAMyEEuzJnyUi/phone?sound=siren'), {
    kind: 'pushover',
    config: {
      user_key: 'uQiRzpo4DXghDmr9QzzfQu27cmVRsG',
      app_token: 'azGDORePK8gMaC0QOYAMyEEuzJnyUi',
      device: 'phone',
      sound: 'siren',
    },
  });
  t.same(read('jsons://user:pw@hooks.example.org/notify/x?+X-Api-Key=k1'), {
    kind: 'http',
    config: {
      url: 'https://hooks.example.org/notify/x',
      method: 'POST',
      content_type: 'json',
      headers: { 'X-Api-Key': 'k1' },
      auth_header: 'Authorization',
      auth_value: `Basic ${Buffer.from('user:pw').toString('base64')}`,
    },
  });
  t.same(read('json://hooks.lan:8080/in?+Authorization=Bearer%20abc&method=put'), {
    kind: 'http',
    config: {
      url: 'http://hooks.lan:8080/in',
      method: 'PUT',
      content_type: 'json',
      auth_header: 'Authorization',
      auth_value: 'Bearer abc',
    },
  });
  t.same(read('workflows://prod-01.westus.logic.azure.com:443/abc123/sigXYZ'), {
    kind: 'teams',
    config: {
      url:
        'https://prod-01.westus.logic.azure.com:443/workflows/abc123/triggers/manual/paths/invoke' +
        '?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=sigXYZ',
    },
  });
  t.same(read('gchat://AAAAxyz/AIzaKey/tokenABC'), {
    kind: 'google_chat',
    config: { url: 'https://chat.googleapis.com/v1/spaces/AAAAxyz/messages?key=AIzaKey&token=tokenABC' },
  });
  t.same(read('signal://signal.lan:8080/+14155550100/+14155550111/group.abc='), {
    kind: 'signal',
    config: { api_url: 'http://signal.lan:8080', number: '+14155550100', recipients: ['+14155550111', 'group.abc='] },
  });
  t.same(read('mqtts://ha:pw@broker.lan:8883/herald/alerts?qos=1'), {
    kind: 'mqtt',
    config: { url: 'mqtts://broker.lan:8883', topic: 'herald/alerts', username: 'ha', password: 'pw', qos: 1 },
  });
  t.same(read('apprises://apprise.lan/notify-key?tags=ops'), {
    kind: 'apprise_api',
    config: { url: 'https://apprise.lan', key: 'notify-key', tag: 'ops' },
  });
  t.equal(Object.keys(APPRISE_SCHEMES).length, 26, 'every scheme the issue lists, with both spellings of Workflows');
});

t.test('what cannot be mapped is refused with the scheme named', async (t) => {
  t.match(refusal('pushbullet://token'), { code: 'apprise_scheme_unsupported', message: /pushbullet:\/\//u });
  t.match(refusal('msteams://team/a/b/c'), { code: 'apprise_scheme_unsupported', message: /retired/ });
  t.match(refusal('not a url'), { code: 'apprise_url_invalid' });
  t.match(refusal('tgram://123456789:AAH'), { code: 'apprise_url_incomplete', message: /chat id/ });
  t.match(refusal('tgram://notatoken/1'), { code: 'apprise_url_invalid' });
  t.match(refusal('slack://xoxb-1234/#general'), { code: 'apprise_url_incomplete' });
  t.match(
    refusal('matrixs://user:password@hs.lan/!r:hs'),
    { code: 'apprise_url_incomplete' },
    'a password login cannot be told from a token: ask for the token form',
  );
  t.match(refusal('gotify://host.lan'), { code: 'apprise_url_incomplete', message: /application token/ });
  t.match(refusal('json://host.lan/?method=GET'), { code: 'apprise_url_invalid' });
});
