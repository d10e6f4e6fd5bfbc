/**
 * Debian's `apprise` command posting to the generic webhook provider of a real service: `json://`
 * (a JSON body) and `form://` (a urlencoded form the provider reads as flat fields), both with the
 * bearer token Apprise adds as a header (`?+Authorization=…`). Apprise exits 0 only on a 2xx answer.
 */

import { execFile } from 'node:child_process';
import t from 'tap';
import { ensureBinary, peerEnv } from '../helpers/peers.ts';
import { startService, startSink } from '../helpers/service.ts';
import { chain, event, payloadLog, plugins, recorder, relayOf } from './support.ts';

const SECRET = 'apprise-bearer-secret-0123456789';
const MAPPING = {
  title: 'title',
  body: 'message',
  severity: 'type',
  severity_map: { failure: 'critical', success: 'info' },
};

/** Runs `apprise` with `args`; resolves with its exit code and output (never rejects). */
function apprise(args: string[]): Promise<{ code: number; output: string }> {
  const bin = ensureBinary('/usr/bin/apprise');
  return new Promise((resolve) => {
    execFile(bin, args, { env: peerEnv({ HOME: '/nonexistent' }), timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

t.test('apprise json:// and form:// with a bearer header reach the target with title, body and severity', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: plugins('@herald/provider-webhook') });
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const target = await recorder(s, sink.url);
  const { provider, hook } = await chain(s, {
    provider: { kind: 'webhook', name: 'Apprise', auth_mode: 'bearer', config: { secret: SECRET, mapping: MAPPING } },
    target,
  });
  const { host } = new URL(s.url);
  const url = (scheme: string, secret = SECRET) =>
    `${scheme}://${host}${hook}?+Authorization=${encodeURIComponent(`Bearer ${secret}`)}`;

  const json = await apprise(['-vv', '-t', 'Backup finished', '-b', 'nas: 3 GB in 4 min — «ок»', url('json')]);
  t.equal(json.code, 0, `apprise json:// succeeded\n${json.output}`);
  const form = await apprise([
    '-vv',
    '-n',
    'failure',
    '-t',
    'Backup failed & retried',
    '-b',
    'disk full: 100% on /srv\nsecond line',
    url('form'),
  ]);
  t.equal(form.code, 0, `apprise form:// succeeded\n${form.output}`);
  const wrong = await apprise(['-vv', '-t', 'Nope', '-b', 'wrong token', url('json', 'not-the-secret-0000000000')]);
  t.not(wrong.code, 0, 'a wrong bearer token makes apprise fail');
  t.match(wrong.output, /401|Unauthorized/, 'and it says the service answered 401');

  const log = await payloadLog(s, provider.id);
  t.same(
    log.map((e) => e.status_code),
    [401, 202, 202],
    'two accepted, one refused',
  );
  const [formEvent, jsonEvent] = await Promise.all([event(s, log[1].event_ids[0]), event(s, log[2].event_ids[0])]);
  t.match(
    jsonEvent.payload,
    { title: 'Backup finished', body: 'nas: 3 GB in 4 min — «ок»', severity: 'info', fields: { severity: 'info' } },
    'the JSON body mapped',
  );
  t.match(
    formEvent.payload,
    {
      title: 'Backup failed & retried',
      body: 'disk full: 100% on /srv\nsecond line',
      severity: 'critical',
      fields: { severity: 'failure' },
    },
    'the form fields mapped, escapes decoded',
  );
  t.match(log[1].payload_excerpt, /title=Backup\+failed/, 'the payload log shows the form as sent');

  await relayOf(s).tick();
  t.same(
    sink.received.map((r) => r.body.title),
    ['Backup finished', 'Backup failed &amp; retried'],
    'both reach the target',
  );
  t.match(sink.received[1].body.plainBody, /^disk full: 100% on \/srv\nsecond line\n\nSource: 127\.0\.0\.1/);
  t.equal(sink.received[1].body.severity, 'critical');
});
