/**
 * Bad input to `herald user …` on a running service's database: an unknown email, a password too
 * short or one byte over the limit (and exactly at it), no terminal to ask on; each answered with
 * its message (the API's own text for the password rules) and a non-zero exit, nothing changed.
 */
import t from 'tap';
import { startService } from '../helpers/service.ts';
import { herald, serviceEnv } from './support.ts';

t.test('bad input: the message, and a non-zero exit; nothing changes', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const env = await serviceEnv(s.dataDir);
  const u = await s.user();
  const hash = async () =>
    (await s.service.core.db.get<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = ?', [u.id]))
      ?.password_hash;
  const before = await hash();

  const unknown = await herald(
    ['user', 'reset-password', 'nobody@example.test', '--password-stdin'],
    env,
    'good password here\n',
  );
  t.equal(unknown.code, 1);
  t.equal(unknown.stderr, 'herald: no user has the email nobody@example.test. See herald user list.\n');

  const short = await herald(['user', 'reset-password', u.email, '--password-stdin'], env, 'seven7\n');
  t.equal(short.code, 1);
  t.equal(short.stderr, 'herald: The password must be at least 8 characters long.\n', "the API's text");
  const exactly72 = 'я'.repeat(36);
  const tooLong = `${exactly72}x`;
  const long = await herald(['user', 'reset-password', u.email, '--password-stdin'], env, `${tooLong}\n`);
  t.equal(long.code, 1);
  t.equal(
    long.stderr,
    'herald: The password is 73 bytes long; the limit is 72 bytes (UTF-8). Choose a shorter one.\n',
    "the API's text",
  );
  const longRu = await herald(
    ['--lang', 'ru', 'user', 'reset-password', u.email, '--password-stdin'],
    env,
    `${tooLong}\n`,
  );
  t.equal(longRu.code, 1);
  t.equal(
    longRu.stderr,
    'herald: Пароль слишком длинный: не более 72 байт.\n',
    "the web client's Russian text for the code",
  );

  const noTerminal = await herald(['user', 'reset-password', u.email], env);
  t.equal(noTerminal.code, 2, 'no password on a pipe without --password-stdin');
  t.match(noTerminal.stderr, /^herald: no terminal to ask the password on\. .*--password-stdin/);
  t.equal(await hash(), before, 'nothing was changed');

  const limit = await herald(['user', 'reset-password', u.email, '--password-stdin'], env, `${exactly72}\n`);
  t.equal(limit.code, 0, '72 bytes is allowed');
  t.not(await hash(), before);
  t.equal(
    (await s.request('POST', '/api/auth/login', { body: { email: u.email, password: exactly72 } })).status,
    200,
    'and logs in',
  );
});
