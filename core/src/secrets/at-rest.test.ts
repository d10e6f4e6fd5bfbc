import crypto from 'node:crypto';
import t from 'tap';
import { isSealed, SecretsAtRest } from './at-rest.ts';

const KEY = crypto.randomBytes(32).toString('hex');
const OTHER = crypto.randomBytes(32).toString('hex');
const UNREADABLE = { name: 'SecretUnreadableError', code: 'CONFIG' };

t.test('seal: enc:v1:<base64url(iv | ciphertext | tag)>, a fresh IV every time, opened by the same key', async (t) => {
  const box = new SecretsAtRest(KEY);
  const a = box.seal('bot-token-123');
  const b = box.seal('bot-token-123');
  t.match(a, /^enc:v1:[A-Za-z0-9_-]+$/);
  t.equal(Buffer.from(a.slice(7), 'base64url').length, 12 + 'bot-token-123'.length + 16, 'iv, ciphertext and tag');
  t.not(a, b, 'a fresh IV for every seal');
  t.notOk(a.includes('bot-token'), 'nothing of the clear value shows');
  t.equal(box.open(a), 'bot-token-123');
  t.equal(new SecretsAtRest(KEY).open(b), 'bot-token-123', 'another instance with the same key opens it');
  t.equal(box.open(box.seal('')), '', 'the empty string');
  t.equal(box.open(box.seal('пароль ✓')), 'пароль ✓', 'UTF-8');
  t.ok(isSealed(a));
  t.notOk(isSealed('bot-token-123'));
  t.notOk(isSealed(undefined));
});

t.test('open: a clear value passes through; a wrong key, a damaged value or a short one is unreadable', async (t) => {
  const box = new SecretsAtRest(KEY);
  t.equal(box.open('stored before sealing began'), 'stored before sealing began');
  const foreign = new SecretsAtRest(OTHER).seal('x');
  t.throws(() => box.open(foreign, 'the token of bot "Main"'), UNREADABLE);
  t.throws(() => box.open(foreign, 'the token of bot "Main"'), {
    code: 'CONFIG',
    message: /^the token of bot "Main" cannot be decrypted with SERVICE_SECRET_KEY/,
  });
  const sealed = Buffer.from(box.seal('abcdef').slice(7), 'base64url');
  sealed[14] = (sealed[14] ?? 0) ^ 1;
  t.throws(() => box.open(`enc:v1:${sealed.toString('base64url')}`), UNREADABLE, 'a flipped bit fails the tag');
  t.throws(() => box.open('enc:v1:AAAA'), UNREADABLE, 'too short');
  t.equal(box.state(foreign), 'unreadable');
  t.equal(box.state('clear'), 'clear');
  t.equal(box.state(box.seal('x')), 'current');
});

t.test('rotation: the previous key still opens, reseal moves a value to the current key', async (t) => {
  const old = new SecretsAtRest(OTHER);
  const rotating = new SecretsAtRest(KEY, OTHER);
  const stored = old.seal('s3cret');
  t.equal(rotating.state(stored), 'previous');
  t.equal(rotating.open(stored), 's3cret');
  const moved = rotating.reseal(stored);
  t.equal(rotating.state(moved), 'current');
  t.equal(new SecretsAtRest(KEY).open(moved), 's3cret', 'the new key alone opens it');
  t.equal(rotating.reseal(moved), moved, 'a value already under the current key stays as it is');
  t.equal(rotating.state(rotating.reseal('clear')), 'current', 'a clear value is sealed');
  t.equal(new SecretsAtRest(KEY, KEY).state(stored), 'unreadable', 'the same key twice is one key');
});

t.test('configs: only the values at the secret paths are sealed and opened, the shape stays', async (t) => {
  const box = new SecretsAtRest(KEY);
  const config = {
    url: 'http://x',
    token: 't0ken',
    nested: { password: 'pw' },
    items: [{ key: 'k1' }, { key: '' }, { other: 1 }],
    empty: '',
  };
  const paths = ['token', 'nested.password', 'items[].key', 'empty', 'absent'];
  const sealed = box.sealConfig(config, paths);
  t.equal(sealed.url, 'http://x');
  t.ok(isSealed(sealed.token));
  t.ok(isSealed((sealed.nested as { password: string }).password));
  t.ok(isSealed((sealed.items as { key: string }[])[0]!.key));
  t.equal((sealed.items as { key: string }[])[1]!.key, '', 'unset values stay');
  t.equal(sealed.empty, '');
  t.notOk('absent' in sealed);
  t.equal(config.token, 't0ken', 'the input is not changed');
  t.same(box.openConfig(sealed, paths), config, 'opened back');
  t.equal(box.sealConfig(config, ['url.none']), config, 'no secret: the same object');
  t.ok(
    isSealed(box.sealConfig({ token: box.seal('x') }, ['token']).token),
    'a value that looks sealed is sealed again, never trusted',
  );

  const foreign = { ...sealed, token: new SecretsAtRest(OTHER).seal('t0ken') };
  t.throws(() => box.openConfig(foreign, paths), UNREADABLE);
  const lenient = box.openConfigLenient(foreign, paths);
  t.notOk('token' in lenient, 'lenient: an unreadable value counts as not stored');
  t.same(lenient.nested, { password: 'pw' });
  t.equal(box.openLenient(foreign.token as string), '');
});
