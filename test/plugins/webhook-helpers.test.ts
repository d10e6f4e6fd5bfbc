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
