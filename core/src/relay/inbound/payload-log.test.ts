import t from 'tap';
import { payloadExcerpt } from './payload-log.ts';

const excerpt = (text: string) => payloadExcerpt(Buffer.from(text), JSON.parse(text));

t.test('a body that cannot hold a secret field is excerpted as sent', async (t) => {
  const compact = JSON.stringify({ ref: 'refs/heads/main', commits: [{ message: 'Tune the relay' }] });
  t.equal(excerpt(compact), compact);
  const pretty = '{\n  "ref": "refs/heads/main",\n  "n": 1.50\n}';
  t.equal(excerpt(pretty), pretty, 'its layout and its numbers as written');
  t.equal(
    excerpt(JSON.stringify({ note: 'call with Bearer abcdefghijklmnop' })),
    '{"note":"call with Bearer [REDACTED]"}',
    'its free text is still redacted',
  );
  t.equal(excerpt(JSON.stringify({ a: 'x'.repeat(5000) }))!.length, 2048, 'cut to the excerpt length');
  t.equal(payloadExcerpt(Buffer.alloc(0), undefined), null);
});

t.test('a body that may hold one is masked field by field', async (t) => {
  t.equal(
    excerpt(JSON.stringify({ user: 'ann', password: 'hunter2secret' })),
    '{"user":"ann","password":"[REDACTED]"}',
  );
  t.equal(
    excerpt(JSON.stringify({ cookie: 'session=abc', credentials: { user: 'ann', pass: 'x' } })),
    '{"cookie":"[REDACTED]","credentials":"[REDACTED]"}',
    'fields the free-text redaction would not see: a cookie, an object of credentials',
  );
  t.equal(
    excerpt('{\n  "pass\\u0077ord": "hunter2xyz"\n}'),
    '{"password":"[REDACTED]"}',
    'a field name spelt with escapes',
  );
  t.equal(excerpt(JSON.stringify({ v: 'enc:v1:abcdef' })), '{"v":"[REDACTED]"}', 'a value sealed at rest');
  t.equal(
    excerpt(JSON.stringify({ message: 'rotate the token', ok: true })),
    '{"message":"rotate the token","ok":true}',
    'a secret word in a value only takes the masking path, which keeps the value',
  );
});

t.test('a body that is not JSON is excerpted from its text', async (t) => {
  t.equal(payloadExcerpt(Buffer.from('title=Backup+failed&token=abc123')), 'title=Backup+failed&token=[REDACTED]');
});
