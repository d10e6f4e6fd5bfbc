import { PassThrough } from 'node:stream';
import t from 'tap';
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
  log.info(
    {
      token: 'tok-123456',
      password: 'hunter2hunter2',
      nested: {
        client_secret: 'cs-value',
        webhook_secret: 'ws-value',
        csrf: 'csrf-value',
        oauth_code: 'oauth-val',
        ok: 'visible',
      },
      headers: { authorization: 'Bearer abcdefghijkl', cookie: 'herald_session=xyz' },
    },
    'hello',
  );
  log.warn('the key is super-secret-key-value-123 and token=abcdef123456');
  log.error({ err: new Error('failed with password=letmein99') }, 'boom');
  const all = lines.join('\n');
  for (const s of [
    'tok-123456',
    'hunter2hunter2',
    'cs-value',
    'ws-value',
    'csrf-value',
    'oauth-val',
    'abcdefghijkl',
    'herald_session=xyz',
    'super-secret-key-value-123',
    'abcdef123456',
    'letmein99',
  ]) {
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
  t.same(
    lines.map((l) => JSON.parse(l).msg),
    ['a', 'd'],
  );
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

t.test(
  'SERVICE_DEBUG echoes every statement the service runs, in plain text at DEBUG; without it there is none',
  async (t) => {
    const loud = await startService({ SERVICE_DEBUG: 'true', SERVICE_LOG_LEVEL: 'INFO' });
    await loud.request('GET', '/api/setup');
    const created = await loud.request('POST', '/api/v1/memory', {
      token: loud.admin.token,
      body: { content: 'echo-check-value 42' },
    });
    t.equal(created.status, 201);
    t.equal((await loud.request('GET', '/api/v1/memory?q=echo', { token: loud.admin.token })).body.entries.length, 1);
    const sql = loud.logs().filter((l) => l.module === 'db' && l.sql);
    const text = loud.logText();
    await loud.stop();
    t.ok(sql.length > 0, 'SQL statements are logged');
    t.ok(
      sql.every((l) => l.level === 'debug' && l.msg === 'sql'),
      'each as a DEBUG line',
    );
    t.ok(
      sql.some((l) => /^PRAGMA|CREATE TABLE IF NOT EXISTS schema_migrations/.test(l.sql)),
      'the boot statements',
    );
    t.ok(
      sql.some((l) => /^INSERT INTO memory_entries \(/.test(l.sql)),
      "the service's own raw SQL (a memory entry written)",
    );
    t.ok(
      sql.some((l) => /^SELECT \* FROM memory_entries WHERE user_id = \?/.test(l.sql)),
      'and read',
    );
    t.ok(
      sql.some((l) => /FROM users u WHERE u\.id = \?/.test(l.sql)),
      "the request's authentication",
    );
    const ESC = String.fromCharCode(27);
    t.ok(
      sql.every((l) => !l.sql.includes(ESC) && !l.sql.includes('\n')),
      'plain text, one line, no colour codes',
    );
    t.notOk(text.includes(ESC), 'no colour codes anywhere in the log');
    t.notMatch(sql.map((l) => l.sql).join('\n'), /echo-check-value/, 'statements without their values');
    const quiet = await startService({ SERVICE_LOG_LEVEL: 'DEBUG' });
    await quiet.request('GET', '/api/setup');
    const none = quiet.logs().filter((l) => l.module === 'db' && l.sql);
    await quiet.stop();
    t.equal(none.length, 0, 'no SQL echo without SERVICE_DEBUG');
  },
);

t.test('errors, requests and responses keep their content after redaction', async (t) => {
  const { f, lines } = capture();
  const log = f.get('test');
  log.error({ err: new TypeError('disk full at /data') }, 'write failed');
  log.info(
    {
      req: {
        id: 'r1',
        method: 'POST',
        url: '/api/hooks/x?token=abcdef123456',
        ip: '127.0.0.1',
        headers: { authorization: 'Bearer abcdefghijkl' },
      },
      res: { statusCode: 500 },
    },
    'request completed',
  );
  const [e, r] = lines.map((l) => JSON.parse(l));
  t.equal(e.err.message, 'disk full at /data');
  t.equal(e.err.type, 'TypeError');
  t.match(e.err.stack, /TypeError: disk full/);
  t.same(r.req, { id: 'r1', method: 'POST', url: '/api/hooks/x?token=[REDACTED]', ip: '127.0.0.1' });
  t.same(r.res, { statusCode: 500 });
});

t.test('below INFO a request that succeeds writes no request line', async (t) => {
  const s = await startService({ SERVICE_LOG_LEVEL: 'WARNING' });
  t.teardown(() => s.stop());
  t.equal((await s.request('GET', '/api/setup?locale=en')).status, 200);
  t.equal((await s.request('GET', '/api/no-such-route')).status, 404);
  t.same(
    s.logs().filter((l) => l.module === 'http' && l.res),
    [],
    'no request line at WARNING',
  );
});

t.test('a real service logs one line per request: method, URL, status, response time, request id', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const r = await s.request('GET', '/api/setup?locale=en');
  t.equal(r.status, 200);
  const lines = s.logs().filter((l) => l.module === 'http' && l.req?.url === '/api/setup?locale=en' && l.res);
  t.equal(lines.length, 1, 'one line for the request');
  const line = lines[0];
  t.match(line, {
    level: 'info',
    req: { method: 'GET', url: '/api/setup?locale=en', id: String },
    res: { statusCode: 200 },
    responseTime: Number,
  });
  t.equal(line.reqId, line.req.id, 'the request id binds every line of the request');
  t.match(line.msg, /^GET \/api\/setup\?locale=en 200 [\d.]+ ms$/, 'the message says it all for the text format');
});

t.test('a 500 logs the error with type, message, code and stack, and its request line', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  // A real failing path: the table behind the route is gone (a damaged database).
  await s.service.core.db.run('DROP TABLE memory_entries');
  const r = await s.request('GET', '/api/v1/memory', { token: s.admin.token });
  t.equal(r.status, 500);
  t.equal(r.body.code, 'internal');
  t.notMatch(r.text, /memory_entries/, 'the client is not told the internals');
  const failed = s.logs().find((l) => l.level === 'error' && l.msg === 'request failed');
  t.ok(failed, 'the error is logged');
  t.match(
    failed.err,
    { type: String, message: /memory_entries/, stack: /memory_entries[\s\S]*\n\s+at /, code: /\S/ },
    'type, message, code and stack',
  );
  const line = s.logs().find((l) => l.reqId === failed.reqId && l.res);
  t.match(
    line,
    { req: { method: 'GET', url: '/api/v1/memory' }, res: { statusCode: 500 } },
    'the request line of the same request',
  );
});

t.test('credential path segments never reach the log', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const p = await s.request('POST', '/api/providers', {
    token: s.admin.token,
    body: { kind: 'example', name: 'Ex', config: { shared_token: 'shared-token-1' } },
  });
  t.equal(p.status, 201);
  const hook = new URL(p.body.webhook_url).pathname;
  const token = hook.split('/').pop()!;
  t.equal(
    (
      await s.request('POST', hook, {
        body: { type: 'ping', payload: {} },
        headers: { 'x-example-token': 'shared-token-1' },
      })
    ).status,
    200,
  );
  t.equal(
    (await s.request('POST', `${hook}?note=1`, { body: {}, headers: { 'x-example-token': 'wrong-token-00' } })).status,
    401,
  );
  t.equal((await s.request('GET', hook)).status, 404, 'a method without a route');
  const pathId = 'a-bot-path-id-that-is-a-credential';
  await s.request('POST', `/api/bots/${pathId}/webhook`, { body: {} });
  const text = s.logText();
  t.notOk(text.includes(token), 'the webhook token appears in no line');
  t.notOk(text.includes(pathId), 'the bot path id appears in no line');
  const urls = s
    .logs()
    .filter((l) => l.res)
    .map((l) => `${l.req.method} ${l.req.url} ${l.res.statusCode}`);
  t.ok(urls.includes('POST /api/hooks/[REDACTED] 200'), 'accepted');
  t.ok(urls.includes('POST /api/hooks/[REDACTED]?note=1 401'), 'refused, query kept');
  t.ok(urls.includes('GET /api/hooks/[REDACTED] 404'), 'unrouted, still masked');
  t.ok(urls.includes('POST /api/bots/[REDACTED]/webhook 401'), 'bot webhook');
});

t.test('stacks: always in JSON, in text only at DEBUG', async (t) => {
  const err = Object.assign(new Error('disk full'), { code: 'ENOSPC' });
  for (const [format, level, stack] of [
    ['json', 'info', true],
    ['text', 'info', false],
    ['text', 'debug', true],
  ] as const) {
    const lines: string[] = [];
    const dest = new PassThrough();
    dest.on('data', (c: Buffer) => lines.push(c.toString()));
    createLogger({ format, level, destination: dest }).get('test').error({ err }, 'failed');
    const e = JSON.parse(lines[0]!).err;
    t.match(e, { type: 'Error', message: 'disk full', code: 'ENOSPC' }, `${format} at ${level}: type, message, code`);
    t.equal(typeof e.stack === 'string', stack, `${format} at ${level}: ${stack ? 'with' : 'without'} the stack`);
  }
});
