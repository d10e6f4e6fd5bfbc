/**
 * An address with a login in a plain (non-secret) config field (`http://user:pass@host`) would be
 * stored, shown and backed up in clear: saving one is refused with 422 `url_credentials` on the
 * field and a sentence naming the kind's secret fields; a config stored before the rule is shown
 * with the login masked and keeps working until its config is edited.
 */
import t from 'tap';
import { startService, TEST_PLUGINS } from '../helpers/service.ts';

t.test('providers and targets refuse an address with a user name or password in a plain field', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const token = s.admin.token;
  const target = (url: string) =>
    s.request('POST', '/api/targets', { token, body: { kind: 'recorder', name: 'T', config: { url }, locale: 'en' } });

  const refused = await target('http://alice:s3cret-pass@127.0.0.1:9/hook');
  t.equal(refused.status, 422);
  t.equal(refused.body.code, 'url_credentials');
  t.match(
    refused.body.detail,
    new RegExp(
      /The address in url contains a password, which would be stored and shown in clear\. Remove it from the /.source +
        /address .* put it in the secret field api_token/.source,
    ),
  );
  t.notMatch(refused.text, /s3cret-pass/, 'the answer does not repeat the password');
  t.same(refused.body.errors, [
    { path: 'body/config/url', message: 'must not contain a user name or password', code: 'url_credentials' },
  ]);
  const userOnly = await target('https://tok3n@hooks.example.net/x');
  t.equal(userOnly.status, 422, 'a user name alone (often a token) too');
  t.match(userOnly.body.detail, /contains a user name/);
  t.same((await s.request('GET', '/api/targets', { token })).body.targets, [], 'nothing was created');

  const ok = await target('http://127.0.0.1:9/hook?next=a@b');
  t.equal(ok.status, 201, 'an address without a login (an @ in the query is not one) is fine');
  const patched = await s.request('PATCH', `/api/targets/${ok.body.id}`, {
    token,
    body: { config: { url: 'http://bob:pw123456@127.0.0.1:9/hook' } },
  });
  t.equal(patched.status, 422, 'a change to one is refused too');
  t.equal(
    (await s.request('GET', `/api/targets/${ok.body.id}`, { token })).body.config.url,
    'http://127.0.0.1:9/hook?next=a@b',
    'and changes nothing',
  );

  const provider = await s.request('POST', '/api/providers', {
    token,
    body: {
      kind: 'example',
      name: 'P',
      config: { shared_token: 'sharedtoken1', poll_url: 'https://carol:pa55word@feed.example.net/' },
    },
  });
  t.equal(provider.status, 422);
  t.equal(provider.body.code, 'url_credentials');
  t.match(provider.body.detail, /poll_url contains a password.*the secret field shared_token/);
});

t.test('a config stored before the rule shows the login masked and keeps working until edited', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const token = s.admin.token;
  const created = await s.request('POST', '/api/targets', {
    token,
    body: { kind: 'recorder', name: 'Old', config: { url: 'http://127.0.0.1:9/hook' }, locale: 'en' },
  });
  t.equal(created.status, 201);
  // As an earlier version stored it.
  await s.service.core.db.run('UPDATE targets SET config = ? WHERE id = ?', [
    JSON.stringify({ url: 'http://dave:legacy-secret@127.0.0.1:9/hook' }),
    created.body.id,
  ]);
  const shown = await s.request('GET', `/api/targets/${created.body.id}`, { token });
  t.equal(shown.body.config.url, 'http://********@127.0.0.1:9/hook', 'the login is masked');
  t.notMatch(
    JSON.stringify((await s.request('GET', '/api/targets', { token })).body),
    /legacy-secret/,
    'in the list too',
  );
  const renamed = await s.request('PATCH', `/api/targets/${created.body.id}`, { token, body: { name: 'Renamed' } });
  t.equal(renamed.status, 200, 'a change that leaves the config alone still works');
  const roundTrip = await s.request('PATCH', `/api/targets/${created.body.id}`, {
    token,
    body: { config: shown.body.config },
  });
  t.equal(roundTrip.status, 422, 'saving the config as shown asks for the login to move');
  t.equal(roundTrip.body.code, 'url_credentials');
});

t.test(
  "a messaging bot's api_root with a login is refused before the bot service is asked, and a stored one is masked",
  async (t) => {
    const s = await startService({ SERVICE_PLUGINS: `${TEST_PLUGINS},@herald/target-telegram` });
    t.teardown(() => s.stop());
    const token = s.admin.token;
    const refused = await s.request('POST', '/api/bots', {
      token,
      body: {
        name: 'B',
        token: '777:AAF-some_bot_token_for_tests_abcdef',
        mode: 'polling',
        api_root: 'http://eve:b0t-pass@127.0.0.1:9/',
      },
    });
    t.equal(refused.status, 422);
    t.equal(refused.body.code, 'url_credentials');
    t.match(refused.body.detail, /api_root contains a password/);
    t.notMatch(refused.text, /b0t-pass/);
    t.same((await s.request('GET', '/api/bots', { token })).body.bots, [], 'nothing was created');
    const now = new Date().toISOString();
    await s.service.core.db.run(
      'INSERT INTO bots (id, user_id, kind, name, token, bot_id, username, mode, webhook_path_id, api_root, ' +
        `status, created_at, updated_at)
    VALUES (?, ?, 'telegram', 'Old', 'x', '900', 'old_bot', 'polling', 'path-0123456789abcdef', ?, ` +
        `'error', ?, ?)`,
      ['01900000-0000-7000-8000-0000000000b1', s.admin.id, 'https://frank:kept-secret@bot-api.example.net/', now, now],
    );
    const shown = await s.request('GET', '/api/bots/01900000-0000-7000-8000-0000000000b1', { token });
    t.equal(shown.body.api_root, 'https://********@bot-api.example.net/', 'a stored login is masked');
    const patched = await s.request('PATCH', '/api/bots/01900000-0000-7000-8000-0000000000b1', {
      token,
      body: { api_root: shown.body.api_root },
    });
    t.equal(patched.status, 422, 'and saving it back asks for the login to go');
  },
);

t.test('a plugin that refuses a login in its own address gets one problem on the field, not two', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: `${TEST_PLUGINS},@herald/target-gotify` });
  t.teardown(() => s.stop());
  const r = await s.request('POST', '/api/targets', {
    token: s.admin.token,
    body: {
      kind: 'gotify',
      name: 'G',
      config: { server_url: 'https://u:p4ss@gotify.example.net', app_token: 'Aabc123' },
      locale: 'en',
    },
  });
  t.equal(r.status, 422);
  t.equal(r.body.code, 'url_credentials');
  t.same(
    r.body.errors.map((e: { path: string }) => e.path),
    ['body/config/server_url'],
  );
});
