/**
 * The contract's comparison and signature helpers plugins verify webhooks with: `safeEqual` answers equal only for
 * the same text (any difference, including length, is unequal), and `hmacSha256Hex` is HMAC-SHA256 as RFC 4231's
 * test vectors give it.
 */
import { createHmac } from 'node:crypto';
import { hmacSha256Hex, safeEqual } from '@herald/plugin-api';
import t from 'tap';

t.test('safeEqual: equal only for the same text', async (t) => {
  const token = 'sharedtoken1';
  t.equal(safeEqual(token, token), true, 'the same text');
  t.equal(safeEqual('', ''), true, 'two empty strings');
  t.equal(safeEqual('sharedtoken2', token), false, 'the last character differs');
  t.equal(safeEqual('Sharedtoken1', token), false, 'the first character differs (case)');
  t.equal(safeEqual('sharedtoken', token), false, 'a prefix');
  t.equal(safeEqual(`${token}x`, token), false, 'one character more');
  t.equal(safeEqual('', token), false, 'empty against a token');
  t.equal(safeEqual('пароль', 'пароль'), true, 'non-Latin text');
  t.equal(safeEqual('пароль', 'паролъ'), false, 'non-Latin text, one letter differs');
});

t.test('hmacSha256Hex: RFC 4231 test cases and Node', async (t) => {
  // RFC 4231, test case 2: key "Jefe", data "what do ya want for nothing?".
  t.equal(
    hmacSha256Hex('Jefe', Buffer.from('what do ya want for nothing?')),
    '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  );
  const body = Buffer.from(JSON.stringify({ ref: 'refs/heads/main', n: 1 }));
  t.equal(hmacSha256Hex('s3cret', body), createHmac('sha256', 's3cret').update(body).digest('hex'));
  t.not(hmacSha256Hex('s3cret', body), hmacSha256Hex('s3cret2', body), 'another key, another signature');
});

t.test('hmacSha256Hex: the same as an HMAC object on each side of the block size, for keys and bodies', async (t) => {
  // SHA-256's block is 64 bytes: a key up to it is padded, a longer one is hashed first (RFC 2104). Key lengths are
  // in UTF-8 bytes: 32 Cyrillic letters are 64 bytes, 33 are 66.
  const keys = [
    '',
    'k',
    'a'.repeat(63),
    'b'.repeat(64),
    'c'.repeat(65),
    'd'.repeat(131),
    'ж'.repeat(32),
    'ж'.repeat(33),
    'ключ webhook 🔑',
  ];
  const bodies = [0, 1, 55, 56, 64, 119, 1200, 70_000].map((n) => Buffer.from(Array.from({ length: n }, (_, i) => i)));
  for (const key of keys)
    for (const body of bodies) {
      const copy = Buffer.from(body);
      t.equal(
        hmacSha256Hex(key, body),
        createHmac('sha256', key).update(body).digest('hex'),
        `key of ${Buffer.byteLength(key)} bytes, body of ${body.length}`,
      );
      t.same(body, copy, 'the body is left as it was');
    }
  const view = Buffer.from('xxpayloadxx').subarray(2, 9);
  t.equal(hmacSha256Hex('s', view), createHmac('sha256', 's').update('payload').digest('hex'), 'a view of a buffer');
});
