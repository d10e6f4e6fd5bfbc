import t from 'tap';
import { PassThrough } from 'node:stream';
import { createLogger } from '../../core/src/logging/logger.ts';
import { SecretValues } from '../../core/src/logging/redact.ts';
import { startService } from '../helpers/service.ts';

function capture(levels: Record<string, any> = {}, level: any = 'info') {
  const lines: string[] = [];
  const dest = new PassThrough();
  dest.on('data', (c: Buffer) => lines.push(...c.toString().split('\n').filter(Boolean)));
  const secrets = new SecretValues();
  secrets.add('super-secret-key-value-123');
  const f = createLogger({ format: 'json', level, levels, destination: dest, secrets });
  return { f, lines };
}

t.test('secret fields and values are masked in every line', async (t) => {
  const { f, lines } = capture();
  const log = f.get('test');
  log.info({ token: 'tok-123456', password: 'hunter2hunter2', nested: { client_secret: 'cs-value', webhook_secret: 'ws-value', csrf: 'csrf-value', oauth_code: 'oauth-val', ok: 'visible' }, headers: { authorization: 'Bearer abcdefghijkl', cookie: 'herald_session=xyz' } }, 'hello');
  log.warn('the key is super-secret-key-value-123 and token=abcdef123456');
  log.error({ err: new Error('failed with password=letmein99') }, 'boom');
  const all = lines.join('\n');
  for (const s of ['tok-123456', 'hunter2hunter2', 'cs-value', 'ws-value', 'csrf-value', 'oauth-val', 'abcdefghijkl', 'herald_session=xyz', 'super-secret-key-value-123', 'abcdef123456', 'letmein99']) {
    t.notOk(all.includes(s), `${s} masked`);
  }
  t.ok(all.includes('visible'), 'ordinary fields kept');
  t.equal(lines.length, 3);
  for (const l of lines) t.doesNotThrow(() => JSON.parse(l), 'one JSON object per line');
});

t.test('per-module levels', async (t) => {
  const { f, lines } = capture({ chatty: 'debug', quiet: 'error' }, 'info');
  f.get('chatty').debug('a');
  f.get('quiet').warn('b');
  f.get('other').debug('c');
  f.get('other').info('d');
  t.same(lines.map((l) => JSON.parse(l).msg), ['a', 'd']);
});

t.test('service logs never carry the secret key, tokens or passwords', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  await s.request('POST', '/api/auth/login', { body: { email: s.admin.email, password: 'wrong password here' } });
  await s.request('GET', '/api/v1/users/me', { token: s.admin.token });
  await s.request('GET', '/api/v1/users/me', { token: 'garbage.token.value' });
  const text = s.logText();
  t.notOk(text.includes(s.admin.token), 'no access token in logs');
  t.notOk(text.includes('correct horse battery'), 'no password in logs');
  t.notOk(text.includes(s.service.core.config.secretKey), 'no secret key in logs');
  t.ok(text.length > 0);
});

t.test('SERVICE_DEBUG adds SQL echo; without it there is none', async (t) => {
  const loud = await startService({ SERVICE_DEBUG: 'true', SERVICE_LOG_LEVEL: 'INFO' });
  await loud.request('GET', '/api/setup');
  const sql = loud.logs().filter((l) => l.module === 'db' && l.sql);
  await loud.stop();
  t.ok(sql.length > 0, 'SQL statements are logged');
  t.ok(sql.some((l) => /select/i.test(l.sql)));
  const quiet = await startService({ SERVICE_LOG_LEVEL: 'DEBUG' });
  await quiet.request('GET', '/api/setup');
  const none = quiet.logs().filter((l) => l.module === 'db' && l.sql);
  await quiet.stop();
  t.equal(none.length, 0, 'no SQL echo without SERVICE_DEBUG');
});

t.test('errors, requests and responses keep their content after redaction', async (t) => {
  const { f, lines } = capture();
  const log = f.get('test');
  log.error({ err: new TypeError('disk full at /data') }, 'write failed');
  log.info({ req: { id: 'r1', method: 'POST', url: '/api/hooks/x?token=abcdef123456', ip: '127.0.0.1', headers: { authorization: 'Bearer abcdefghijkl' } }, res: { statusCode: 500 } }, 'request completed');
  const [e, r] = lines.map((l) => JSON.parse(l));
  t.equal(e.err.message, 'disk full at /data');
  t.equal(e.err.type, 'TypeError');
  t.match(e.err.stack, /TypeError: disk full/);
  t.same(r.req, { id: 'r1', method: 'POST', url: '/api/hooks/x?token=[REDACTED]', ip: '127.0.0.1' });
  t.same(r.res, { statusCode: 500 });
});
