/**
 * The email target against a second SMTP server, independent of the smtp-server package the other
 * email tests use: Debian's aiosmtpd (python3-aiosmtpd) running
 * plugins/target-email/test/peers/greylist_smtpd.py, which answers the first recipient with
 * "451 4.7.1" as a greylisting server does. The delivery must be kept and retried after its
 * backoff, and the retry must get through.
 */

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { leaves, parseMime } from '../../plugins/target-email/test/mime.ts';
import { DEBIAN_PYTHON, ensurePeer, startPeer, waitFor } from '../helpers/peers.ts';
import { startService } from '../helpers/service.ts';
import { plugins } from './support.ts';
import { pipeline } from './targets-support.ts';

const SCRIPT = fileURLToPath(new URL('../../plugins/target-email/test/peers/greylist_smtpd.py', import.meta.url));

const aiosmtpdInstalled = () => {
  try {
    execFileSync(DEBIAN_PYTHON, ['-c', 'import aiosmtpd'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

t.test('email: a 451 from a greylisting aiosmtpd is retried after the backoff and then delivered', async (t) => {
  ensurePeer('python3-aiosmtpd', aiosmtpdInstalled);
  const smtpd = startPeer(DEBIAN_PYTHON, [SCRIPT, '1']);
  const events = () => smtpd.lines().map((l) => JSON.parse(l) as Record<string, any>);
  const s = await startService({ SERVICE_PLUGINS: plugins('herald-plugin-example', '@herald/target-email') });
  t.teardown(async () => {
    await s.stop();
    await smtpd.stop();
  });
  const listening = await waitFor(
    'aiosmtpd to listen',
    () => events().find((e) => e.event === 'listening'),
    10_000,
    smtpd,
  );

  const mail = await pipeline(s, {
    kind: 'email',
    name: 'Greylisted',
    config: {
      host: '127.0.0.1',
      port: listening.port,
      security: 'none',
      from: 'Herald <herald@example.org>',
      to: ['ops@example.org'],
      subject_prefix: '[Herald]',
    },
  });
  // The service's clock stands still from here, so "not yet due" does not depend on how fast this machine is.
  s.clock.set(new Date());
  const id = await mail.fire('Пожарная дверь <open>', { note: 'second try' });

  await mail.tick();
  const first = await mail.outcome(id);
  t.same(
    events()
      .filter((e) => e.event === 'greylisted')
      .map((e) => e.rcpt),
    ['ops@example.org'],
    'aiosmtpd answered 451 to the first attempt',
  );
  t.equal(first.delivery.status, 'queued', 'a 451 keeps the delivery queued');
  t.equal(first.delivery.attempts, 1);
  t.match(first.delivery.last_error, /451/, 'the error names the reply');
  const wait = new Date(first.delivery.next_attempt_at).getTime() - new Date(first.delivery.updated_at).getTime();
  t.ok(wait >= 1000 && wait <= 2000, `due again after the first backoff step, 1 to 2 s (${wait} ms)`);
  t.notOk(
    events().some((e) => e.event === 'message'),
    'nothing was delivered yet',
  );

  await mail.tick();
  t.equal((await mail.outcome(id)).delivery.attempts, 1, 'not retried before its time');
  s.clock.set(new Date(new Date(first.delivery.next_attempt_at).getTime() + 1));
  await mail.tick();
  const done = await mail.outcome(id);
  t.equal(done.delivery.status, 'sent', `delivered on the retry (${done.delivery.last_error})`);
  t.equal(done.delivery.attempts, 2);
  t.equal(done.event.dispatch_status, 'dispatched');

  const messages = events().filter((e) => e.event === 'message');
  t.equal(messages.length, 1, 'exactly one message reached aiosmtpd');
  t.equal(messages[0]!.mail_from, 'herald@example.org');
  t.same(messages[0]!.rcpt_tos, ['ops@example.org']);
  const root = parseMime(messages[0]!.data);
  t.equal(
    root.headers.get('subject'),
    '[Herald] Thing: Пожарная дверь <open>',
    'the subject, decoded from its MIME encoding',
  );
  const parts = leaves(root);
  t.match(parts.find((p) => p.type === 'text/plain')?.body, /Пожарная дверь <open> happened \(second try\)/);
  t.match(parts.find((p) => p.type === 'text/html')?.body, /Пожарная дверь &lt;open&gt;/);
});
