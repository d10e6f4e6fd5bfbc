import t from 'tap';
import { MASK, maskKeyValues, redactedJson, redactObject, redactText, SEALED_MARK, SecretValues } from './redact.ts';

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

/** A small seeded generator (mulberry32): the same cases on every run. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  'token',
  'password',
  'Bearer ',
  'bearer',
  'Basic  ',
  'Token\t',
  'abcdef123456',
  '://',
  'https://',
  'mqtt://',
  'user:pw',
  '@',
  '/',
  '=',
  ':',
  ': ',
  '"',
  "'",
  ' ',
  '\n',
  ',',
  'api_key',
  'apiKey',
  'secret_mode',
  'x',
  'é',
  '😀',
  '\ud83d',
  SEALED_MARK,
  'authorization',
];

t.test('redactText answers as the patterns alone would, where its quick checks skip them', async (t) => {
  const URL_LOGIN = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^/?#\s@"'<>]{1,512}@/gi;
  const BEARER = /\b([Bb]earer|Basic|Token)\s{1,8}[A-Za-z0-9._~+/=-]{6,4096}/g;
  // The three steps applied in turn, unconditionally.
  const reference = (text: string): string =>
    maskKeyValues(text.replace(BEARER, (_m, scheme: string) => `${scheme} ${MASK}`).replace(URL_LOGIN, `$1${MASK}@`));
  const next = rng(27);
  const differ: string[] = [];
  let masked = 0;
  for (let n = 0; n < 4000; n++) {
    const len = 1 + Math.floor(next() * 24);
    let text = '';
    for (let i = 0; i < len; i++) text += PIECES[Math.floor(next() * PIECES.length)];
    const want = reference(text);
    if (want !== text) masked++;
    if (redactText(text) !== want) differ.push(text);
  }
  t.same(differ, [], 'the same answer for 4,000 texts');
  t.ok(masked > 1000, `${masked} of them had something masked`);
  t.equal(redactText('see https://a:b@host/x and mail a@b'), `see https://${MASK}@host/x and mail a@b`);
  t.equal(redactText('https://host/path then user@host'), 'https://host/path then user@host');
  t.equal(redactText(`https://${'a'.repeat(512)}@h`), `https://${MASK}@h`, '512 login characters are a login');
  t.equal(redactText(`https://${'a'.repeat(513)}@h`), `https://${'a'.repeat(513)}@h`, '513 are not');
});

t.test('redactedJson writes the start of JSON.stringify(redactObject(value)) without the copy', async (t) => {
  const next = rng(2027);
  const word = () => {
    let s = '';
    const n = Math.floor(next() * 4);
    for (let i = 0; i <= n; i++) s += PIECES[Math.floor(next() * PIECES.length)];
    return s;
  };
  const KEYS = ['name', 'token', 'access_token', 'token_type', 'password', '__proto__', 'list', '0', '10', 'é', ''];
  const value = (depth: number): unknown => {
    const r = next();
    if (depth > 16 || r < 0.3) {
      const p = next();
      if (p < 0.3) return word();
      if (p < 0.45) return Math.floor(next() * 2e6) / (next() < 0.5 ? 1 : 7) - 1e6;
      if (p < 0.55) return next() < 0.5;
      if (p < 0.65) return null;
      if (p < 0.75) return '';
      return `${SEALED_MARK}${word()}`;
    }
    if (r < 0.6) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(next() * 5); i > 0; i--) o[KEYS[Math.floor(next() * KEYS.length)]!] = value(depth + 1);
    return o;
  };
  const differ: string[] = [];
  let masked = 0;
  for (let n = 0; n < 3000; n++) {
    // Parsed, as the inbound routes hand it over: a `__proto__` key is then an own property.
    const v = JSON.parse(JSON.stringify(value(0)) ?? 'null') as unknown;
    const full = JSON.stringify(redactObject(v));
    if (full.includes(MASK)) masked++;
    for (const limit of [1, 7, 64, 300, 1_000_000]) {
      if (redactedJson(v, limit) !== full.slice(0, limit)) differ.push(`${limit} of ${full}`);
    }
  }
  t.same(differ, [], 'the same answer for 3,000 values cut at five lengths');
  t.ok(masked > 300, `${masked} of them had something masked`);
  const deep = JSON.parse(`${'{"a":'.repeat(15)}{"token":"t","x":"${SEALED_MARK}s"}${'}'.repeat(15)}`) as unknown;
  t.equal(redactedJson(deep, 10_000), JSON.stringify(redactObject(deep)), 'below depth 12 values are left as they are');
  t.match(redactedJson(JSON.parse('{"__proto__":{"a":1},"token":"s"}'), 100), `{"token":"${MASK}"}`);
  const odd = { d: new Date(0), u: undefined, f: () => 1, n: Number.NaN };
  t.equal(redactedJson(odd, 1000), JSON.stringify(redactObject(odd)), 'anything else takes the long way');
  t.equal(redactedJson('x'.repeat(10_000), 5), '"xxxx');
});
