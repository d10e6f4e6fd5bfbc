/**
 * A config its plugin would refuse at start is refused when it is saved (422 naming the field),
 * and every field problem carries the JSON Schema keyword as `code` with its `params`, so that a
 * client can say it in its own words.
 */
import t from 'tap';
import { plugins } from '../e2e/support.ts';
import { startService } from '../helpers/service.ts';

const MAPPING = { title: 'alert.title' };
const GOOD_SECRET = 'a-secret-of-sixteen+';

t.test('providers and targets: what create() would refuse is a 422 at create and update', async (t) => {
  const s = await startService({
    SERVICE_PLUGINS: plugins(
      '@herald/provider-webhook',
      '@herald/provider-immich',
      '@herald/target-email',
      '@herald/target-chat-webhook',
    ),
  });
  t.teardown(() => s.stop());
  const post = (path: string, body: unknown) => s.request('POST', path, { token: s.admin.token, body });
  const field = (r: { body: { errors?: { path: string }[] } }, path: string) =>
    r.body.errors?.find((e) => e.path === path);

  const short = await post('/api/providers', {
    kind: 'webhook',
    name: 'Weak',
    auth_mode: 'bearer',
    config: { secret: 'short', mapping: MAPPING },
  });
  t.equal(short.status, 422, 'a 5-character secret is refused');
  t.equal(short.body.code, 'validation_failed');
  t.match(
    field(short, 'body/config/secret'),
    { code: 'minLength', params: { limit: 16 } },
    'named at the field, with the limit',
  );
  t.equal(
    (await s.request('GET', '/api/providers', { token: s.admin.token })).body.providers.filter(
      (p: { kind: string }) => p.kind === 'webhook',
    ).length,
    0,
    'nothing saved',
  );

  const none = await post('/api/providers', {
    kind: 'webhook',
    name: 'No secret',
    auth_mode: 'hmac_sha256',
    config: { mapping: MAPPING },
  });
  t.equal(none.status, 422, 'an authenticated mode without a secret is refused');
  t.match(field(none, 'body/config/secret'), { code: 'required' });
  t.match(none.body.detail, /needs a shared secret/);

  const badMapping = await post('/api/providers', {
    kind: 'webhook',
    name: 'Bad mapping',
    auth_mode: 'bearer',
    config: { secret: GOOD_SECRET, mapping: { title: 'a..b' } },
  });
  t.equal(badMapping.status, 422, 'a mapping that does not compile is refused');
  t.ok(field(badMapping, 'body/config/mapping/title'), 'at the mapping field');

  const badMap = await post('/api/providers', {
    kind: 'webhook',
    name: 'Bad map',
    auth_mode: 'bearer',
    config: { secret: GOOD_SECRET, mapping: { ...MAPPING, severity_map: { P1: 'urgent' } } },
  });
  t.equal(badMap.status, 422);
  t.match(
    field(badMap, 'body/config/mapping/severity_map/P1'),
    { code: 'enum', params: { allowedValues: ['info', 'warning', 'critical'] } },
    'an enum of constants is reported once, as an enum',
  );

  const ok = await post('/api/providers', {
    kind: 'webhook',
    name: 'Good',
    auth_mode: 'bearer',
    config: { secret: GOOD_SECRET, mapping: { ...MAPPING, severity_map: { P1: 'critical', P3: 'info' } } },
  });
  t.equal(ok.status, 201, ok.text);
  t.equal(ok.body.status, 'running', 'a config that passes runs');
  const patched = await s.request('PATCH', `/api/providers/${ok.body.id}`, {
    token: s.admin.token,
    body: { config: { secret: 'tiny', mapping: MAPPING } },
  });
  t.equal(patched.status, 422, 'the same check on update');
  t.match(field(patched, 'body/config/secret'), { code: 'minLength' });
  t.equal(
    (await s.request('GET', `/api/providers/${ok.body.id}`, { token: s.admin.token })).body.status,
    'running',
    'the stored provider is untouched',
  );

  const url = await post('/api/providers', {
    kind: 'immich',
    name: 'Photos',
    config: { base_url: 'photos.example.net' },
  });
  t.equal(url.status, 422);
  t.match(
    field(url, 'body/config/base_url'),
    { code: 'pattern', params: { pattern: '^https?://' } },
    'a pattern error carries the pattern',
  );
  t.match(field(url, 'body/config/api_key'), { code: 'required' }, 'a missing field is named by its own path');

  const email = await post('/api/targets', {
    kind: 'email',
    name: 'Mail',
    locale: 'en',
    config: { host: 'smtp.example.test', from: 'herald@example.test', to: ['me@example.test'], password: 'p4ssword' },
  });
  t.equal(email.status, 422, 'a target password without a username is refused, as the plugin would at start');
  t.match(field(email, 'body/config/username'), { code: 'required' });

  const hook = await post('/api/targets', {
    kind: 'chat_webhook',
    name: 'Chat',
    locale: 'en',
    config: { format: 'slack', url: 'hooks.example.test/x' },
  });
  t.equal(hook.status, 422);
  t.match(field(hook, 'body/config/url'), { code: 'pattern' });
  t.notMatch(JSON.stringify(hook.body), /hooks\.example\.test/, 'the refused secret is not echoed');
});
