import t from 'tap';
import { redactText, redactObject, MASK, SEALED_MARK } from './redact.ts';

/**
 * Time allowed for text that a linear scan handles in a few milliseconds and a backtracking one in
 * minutes. Code instrumented by the mutation tester (npm run mutate) runs several times slower and
 * is run once per mutant, so there the texts are 16 times shorter (`size`): a linear scan of them
 * still takes milliseconds, a quadratic one still seconds to minutes.
 */
const LINEAR_MS = 1500;
const size = (n: number) => ('__stryker__' in globalThis ? Math.ceil(n / 16) : n);

t.test('redactText masks values of sensitive keys and bearer credentials', async (t) => {
  t.equal(redactText('token=abc123 other=1'), `token=${MASK} other=1`);
  t.equal(redactText('{"client_secret": "s3cr3t", "name": "x"}'), `{"client_secret": "${MASK}", "name": "x"}`);
  t.notMatch(redactText('Authorization: Bearer abcdefghijk'), /abcdefghijk/);
  t.equal(redactText('call with Bearer abcdefghijk now'), `call with Bearer ${MASK} now`);
  t.equal(redactText('fix the token refresh'), 'fix the token refresh', 'prose without a value stays readable');
});

t.test('redactText is linear on long runs of word characters', async (t) => {
  for (const s of ['a'.repeat(size(1 << 20)), `${'tokentoken'.repeat(size(50_000))}=`, 'x_'.repeat(size(400_000))]) {
    const start = performance.now();
    redactText(s);
    t.ok(performance.now() - start < LINEAR_MS, `${s.length} characters in ${Math.round(performance.now() - start)} ms`);
  }
});

t.test('redactObject masks by key at any depth and leaves exotic objects alone', async (t) => {
  const out = redactObject({ a: { password: 'p', list: [{ api_key: 'k' }] }, keep: 'v', empty_token: '' });
  t.same(out, { a: { password: MASK, list: [{ api_key: MASK }] }, keep: 'v', empty_token: '' });
  const d = new Date(0);
  t.equal(redactObject({ d }).d, d);
});

t.test('names that describe a secret are not masked; the secrets themselves still are', async (t) => {
  const out = redactObject({
    secrets_mode: 'include', password_set: true, token_version: 3, token_type: 'Bearer', secretsMode: 'exclude', secret_count: 2,
    secret: 's1', client_secret: 's2', secret_key: 's3', password: 'p', password_reset: 'r', api_key: 'k', access_token: 't', secrets: ['a'],
  });
  t.same(out, {
    secrets_mode: 'include', password_set: true, token_version: 3, token_type: 'Bearer', secretsMode: 'exclude', secret_count: 2,
    secret: MASK, client_secret: MASK, secret_key: MASK, password: MASK, password_reset: MASK, api_key: MASK, access_token: MASK, secrets: MASK,
  });
  t.equal(redactText('POST /api/backup/files?secrets_mode=include 201'), 'POST /api/backup/files?secrets_mode=include 201', 'a request line keeps the mode');
  t.equal(redactText('{"secrets_mode": "exclude", "client_secret": "x1y2z3"}'), `{"secrets_mode": "exclude", "client_secret": "${MASK}"}`);
  t.equal(redactText('secret=abc123 token_type=Bearer'), `secret=${MASK} token_type=Bearer`);
});

t.test('redactText masks the login of an address, not the rest of it', async (t) => {
  t.equal(redactText('connecting to http://admin:hunter2@nas.lan:8080/api?x=1'), `connecting to http://${MASK}@nas.lan:8080/api?x=1`);
  t.equal(redactText('broker mqtts://tok3n@broker.example.net and https://example.net/a@b'), `broker mqtts://${MASK}@broker.example.net and https://example.net/a@b`, 'a path with @ is not a login');
  t.equal(redactText('{"base_url":"https://u:p@h.example"}'), `{"base_url":"https://${MASK}@h.example"}`);
  t.equal(redactText('mail me at someone@example.net'), 'mail me at someone@example.net');
  const start = performance.now();
  redactText(`${'http://'.repeat(size(100_000))}x`);
  t.ok(performance.now() - start < LINEAR_MS, 'linear on many schemes without a login');
});

t.test('a value sealed at rest is masked whatever its field is called, at any depth and in arrays', async (t) => {
  const { SEALED_PREFIX } = await import('../secrets/at-rest.ts');
  t.equal(SEALED_MARK, SEALED_PREFIX, 'the same prefix the sealing uses');
  const out = redactObject({ topic: 'enc:v1:abc', nested: { url: 'enc:v1:def', plain: 'enc:v2-not-ours', list: ['enc:v1:ghi', 'x'] }, note: 'an enc:v1: inside text' });
  t.same(out, { topic: MASK, nested: { url: MASK, plain: 'enc:v2-not-ours', list: [MASK, 'x'] }, note: 'an enc:v1: inside text' });
  t.equal(redactObject('enc:v1:top'), MASK, 'a sealed value on its own');
  t.equal(redactObject('plain'), 'plain');
});
