import t from 'tap';
import { MASK, redactObject, redactText, SEALED_MARK, SecretValues } from './redact.ts';

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
    t.ok(
      performance.now() - start < LINEAR_MS,
      `${s.length} characters in ${Math.round(performance.now() - start)} ms`,
    );
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
    secrets_mode: 'include',
    password_set: true,
    token_version: 3,
    token_type: 'Bearer',
    secretsMode: 'exclude',
    secret_count: 2,
    secret: 's1',
    client_secret: 's2',
    secret_key: 's3',
    password: 'p',
    password_reset: 'r',
    api_key: 'k',
    access_token: 't',
    secrets: ['a'],
  });
  t.same(out, {
    secrets_mode: 'include',
    password_set: true,
    token_version: 3,
    token_type: 'Bearer',
    secretsMode: 'exclude',
    secret_count: 2,
    secret: MASK,
    client_secret: MASK,
    secret_key: MASK,
    password: MASK,
    password_reset: MASK,
    api_key: MASK,
    access_token: MASK,
    secrets: MASK,
  });
  t.equal(
    redactText('POST /api/backup/files?secrets_mode=include 201'),
    'POST /api/backup/files?secrets_mode=include 201',
    'a request line keeps the mode',
  );
  t.equal(
    redactText('{"secrets_mode": "exclude", "client_secret": "x1y2z3"}'),
    `{"secrets_mode": "exclude", "client_secret": "${MASK}"}`,
  );
  t.equal(redactText('secret=abc123 token_type=Bearer'), `secret=${MASK} token_type=Bearer`);
});

t.test('redactText masks the login of an address, not the rest of it', async (t) => {
  t.equal(
    redactText('connecting to http://admin:hunter2@nas.lan:8080/api?x=1'),
    `connecting to http://${MASK}@nas.lan:8080/api?x=1`,
  );
  t.equal(
    redactText('broker mqtts://tok3n@broker.example.net and https://example.net/a@b'),
    `broker mqtts://${MASK}@broker.example.net and https://example.net/a@b`,
    'a path with @ is not a login',
  );
  t.equal(redactText('{"base_url":"https://u:p@h.example"}'), `{"base_url":"https://${MASK}@h.example"}`);
  t.equal(redactText('mail me at someone@example.net'), 'mail me at someone@example.net');
  const start = performance.now();
  redactText(`${'http://'.repeat(size(100_000))}x`);
  t.ok(performance.now() - start < LINEAR_MS, 'linear on many schemes without a login');
});

t.test('a value sealed at rest is masked whatever its field is called, at any depth and in arrays', async (t) => {
  const { SEALED_PREFIX } = await import('../secrets/at-rest.ts');
  t.equal(SEALED_MARK, SEALED_PREFIX, 'the same prefix the sealing uses');
  const out = redactObject({
    topic: 'enc:v1:abc',
    nested: { url: 'enc:v1:def', plain: 'enc:v2-not-ours', list: ['enc:v1:ghi', 'x'] },
    note: 'an enc:v1: inside text',
  });
  t.same(out, {
    topic: MASK,
    nested: { url: MASK, plain: 'enc:v2-not-ours', list: [MASK, 'x'] },
    note: 'an enc:v1: inside text',
  });
  t.equal(redactObject('enc:v1:top'), MASK, 'a sealed value on its own');
  t.equal(redactObject('plain'), 'plain');
});

t.test('redactObject: every name spelling, nulls, objects without a prototype, errors, cycles', async (t) => {
  t.equal(MASK, '[REDACTED]');
  t.same(
    redactObject({
      private_key: 'a',
      privateKey: 'b',
      'private-key': 'c',
      privatekey: 'd',
      apiKey: 'e',
      'api-key': 'f',
      TOKEN_TYPE: 'Bearer',
      Secret_Mode: 'include',
    }),
    {
      private_key: MASK,
      privateKey: MASK,
      'private-key': MASK,
      privatekey: MASK,
      apiKey: MASK,
      'api-key': MASK,
      TOKEN_TYPE: 'Bearer',
      Secret_Mode: 'include',
    },
    'names in any case; descriptive suffixes in any case',
  );
  t.same(
    redactObject({ password: null, token: undefined, secret: '', a: null, b: undefined, n: 5 }),
    { password: null, token: undefined, secret: '', a: null, b: undefined, n: 5 },
    'nothing to mask in an empty secret',
  );
  t.equal(redactObject(null), null);
  t.equal(redactObject(undefined), undefined);
  const bare = Object.assign(Object.create(null), { password: 'p', keep: 'k' });
  t.same({ ...(redactObject(bare) as object) }, { password: MASK, keep: 'k' }, 'an object without a prototype');
  const err = Object.assign(new Error('boom'), { token: 't', code: 'E' });
  t.same(redactObject(err), { token: MASK, code: 'E' }, "an error's own fields");
  const buf = Buffer.from('password=x');
  t.equal(redactObject({ buf }).buf, buf, 'a buffer is left alone');
  const cyclic: Record<string, unknown> = { name: 'loop', password: 'p' };
  cyclic.self = cyclic;
  let out: any;
  t.doesNotThrow(() => {
    out = redactObject(cyclic);
  }, 'a cycle ends at the depth limit');
  t.equal(out.password, MASK);
  t.equal(out.self.self.password, MASK);
  let deep: Record<string, unknown> = { password: 'deep' };
  for (let i = 0; i < 12; i++) deep = { next: deep };
  let at12: any = redactObject(deep);
  for (let i = 0; i < 12; i++) at12 = at12.next;
  t.equal(at12.password, MASK, 'a secret twelve levels down is masked');
});

t.test('redactText: which characters make a key, and how far it reaches', async (t) => {
  for (const key of [
    'token0',
    'token9',
    'tokenA',
    'tokenZ',
    'tokena',
    'tokenz',
    'token_id',
    'token.id',
    'token-id',
    'TOKEN',
    'Api-Key',
  ]) {
    t.equal(redactText(`${key}=s3cretvalue`), `${key}=${MASK}`, `${key}=… is masked`);
  }
  for (const key of [
    'token&id',
    'token@id',
    'token^id',
    'token|id',
    'token/id',
    'token~id',
    'token[id',
    'token{id',
    'token`id',
  ]) {
    t.equal(redactText(`${key}=plain1`), `${key}=plain1`, `${key}=…: only the part after ${key[5]} is the key`);
  }
  t.equal(
    redactText(`token${'x'.repeat(59)}=v1`),
    `token${'x'.repeat(59)}=${MASK}`,
    'a key of 64 characters is read whole',
  );
  t.equal(redactText(`token${'x'.repeat(60)}=v1`), `token${'x'.repeat(60)}=v1`, 'of a longer one only the last 64');
  t.equal(redactText('"token"        : "abc"'), `"token"        : "${MASK}"`, 'up to 8 spaces before the separator');
  t.equal(redactText('"token"         : "abc"'), '"token"         : "abc"', 'not 9');
  t.equal(redactText('token : abc'), `token : ${MASK}`);
  t.equal(redactText(`{'token': 'abc'}`), `{'token': '${MASK}'}`, 'single-quoted keys and values');
  t.equal(redactText(':token: abc'), `:token: ${MASK}`, 'a separator first in the text');
  t.equal(redactText('=token=abc'), `=token=${MASK}`);
});

t.test('redactText: values, quoted and not, and what ends them', async (t) => {
  t.equal(redactText('token="two words" next'), `token="${MASK}" next`, 'a quoted value whole, spaces included');
  t.equal(redactText(`token='two words' next`), `token='${MASK}' next`);
  t.equal(redactText('token=abc" rest'), `token=${MASK} rest`, 'a quote at the end of an unquoted value is part of it');
  t.equal(redactText(`token=abc' rest`), `token=${MASK} rest`);
  t.equal(redactText(`token=${' '.repeat(8)}abc`), `token=${' '.repeat(8)}${MASK}`, 'up to 8 spaces before the value');
  t.equal(redactText(`token=${' '.repeat(9)}abc`), `token=${' '.repeat(9)}abc`, 'not 9');
  t.equal(
    redactText('token=a,b;password=c&x=d}'),
    `token=${MASK},b;password=${MASK}&x=d}`,
    'a value ends at , ; & } or a space',
  );
  t.equal(
    redactText('Bearer   abcdefghij and Basic\tdXNlcjpwYXNz'),
    `Bearer ${MASK} and Basic ${MASK}`,
    'up to 8 spaces or tabs after the scheme',
  );
  t.equal(redactText('Bearer abcde'), 'Bearer abcde', 'fewer than 6 characters is not a credential');
});

t.test('known secret values are masked wherever they appear', async (t) => {
  const v = new SecretValues();
  t.equal(v.mask('nothing known yet 123456'), 'nothing known yet 123456');
  v.add(undefined);
  v.add(null);
  v.add('');
  v.add('12345');
  t.equal(v.mask('12345 stays: shorter than 6'), '12345 stays: shorter than 6');
  v.add('123456');
  v.add('s3cr3t-key');
  t.equal(v.mask('a 123456 b 123456 c s3cr3t-key'), `a ${MASK} b ${MASK} c ${MASK}`, 'every occurrence of every value');
  t.equal(v.mask('unrelated'), 'unrelated');
});

t.test('redactText: a key never reaches back into a value already masked', async (t) => {
  // An unquoted value is cut at 4096 characters; the text right after it is read as what it is, not
  // as the end of a key that began inside the masked value ('…tok' + 'en' is not 'token').
  const value = `${'a'.repeat(4093)}tok`;
  t.equal(redactText(`token=${value}en=zzz`), `token=${MASK}en=zzz`);
  t.equal(redactText(`token=${value} token=zzz`), `token=${MASK} token=${MASK}`, 'a whole key after it is still seen');
});
