/**
 * `Secret()` drives log masking by value: whatever a plugin logs, under any field name or inside
 * a message or error text, the values of its instance's secret fields never reach a log line.
 */
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startService, TEST_PLUGINS } from '../helpers/service.ts';

const leaky = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/leaky');
const SECRET = 'correct-horse-battery-staple-42';

t.test('a plugin logging its Secret() value prints it masked', async (t) => {
  const received: string[] = [];
  const server = http.createServer((req, res) => {
    req.on('data', (c) => received.push(String(c)));
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  const s = await startService({
    SERVICE_PLUGINS: `${TEST_PLUGINS},${leaky}`,
    SERVICE_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
  });
  t.teardown(async () => {
    await s.stop();
    server.close();
  });
  const token = s.admin.token;
  const tg = await s.request('POST', '/api/targets', {
    token,
    body: { kind: 'leaky', name: 'Leaky', config: { url, passphrase_for_relay: SECRET }, locale: 'en' },
  });
  t.equal(tg.status, 201, tg.text);
  const sent = await s.request('POST', `/api/targets/${tg.body.id}/test`, { token });
  t.equal(sent.status, 200, sent.text);
  t.equal(received.length, 1, 'the test message reached the sink');
  const lines = s.logs().filter((l) => l.module === 'plugin.leaky');
  t.ok(
    lines.some((l) => l.msg === 'sending with [REDACTED]'),
    'the value inside a message is masked',
  );
  t.ok(
    lines.some((l) => l.msg === 'request built' && l.used === '[REDACTED]' && l.request === `${url}?k=[REDACTED]`),
    'the value under an unknown field name is masked',
  );
  t.ok(
    lines.some((l) => l.msg === 'send problem' && l.err?.message === 'remote said: bad key [REDACTED]'),
    'the value inside an error is masked',
  );
  t.notOk(JSON.stringify(s.logs()).includes(SECRET), 'the value appears in no log line');
});
