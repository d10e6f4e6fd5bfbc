/**
 * The inbound SMTP listener (SERVICE_SMTP_PORT) with the email provider, against real clients:
 * Python's smtplib (Debian's /usr/bin/python3) and Debian's swaks, on loopback. A service with two
 * email providers (one open, one requiring AUTH) linked to a recorder target: every accepted mail
 * reaches the target with its subject as the title and its text as the body; unknown recipients,
 * unauthenticated ones, oversize messages and floods are refused with the SMTP replies senders
 * understand; the 250 is sent only once the event is written; a failure to write is a 451 and the
 * sender's retry counts once. A second service with a throwaway certificate does STARTTLS.
 */

import { execFile, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { ConfigurationError, loadConfig } from '../../core/src/config/config.ts';
import { DEBIAN_PYTHON, ensureBinary, ensurePeer, freePort, peerEnv, scratch } from '../helpers/peers.ts';
import { readStoppedDatabase, startService, startSink, type TestService } from '../helpers/service.ts';
import { chain, eventRows, payloadLog, plugins, recorder, until } from './support.ts';

const SWAKS = '/usr/bin/swaks';
const MAX_BYTES = 64 * 1024;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a client without blocking the event loop (the service under test runs in this process). */
function run(bin: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(bin, args, { env: peerEnv(), timeout: 30_000, maxBuffer: 8 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err
        ? typeof (err as { code?: unknown }).code === 'number'
          ? (err as { code: number }).code
          : -1
        : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/**
 * smtplib, one connection: optional STARTTLS and login, then `count` messages (`{i}` in the
 * subject and body numbered), each MAIL, RCPT for every recipient and, when one was accepted, DATA.
 * Prints every reply as JSON.
 */
const PY_SEND = `
import json, smtplib, sys
from email.message import EmailMessage
a = json.loads(sys.argv[1])
s = smtplib.SMTP('127.0.0.1', a['port'], timeout=20, source_address=(a.get('source', '127.0.0.1'), 0))
s.ehlo('nas.local')
res = {'features': s.esmtp_features, 'messages': []}
if a.get('auth'):
    try:
        s.login(*a['auth'])
        res['auth'] = 235
    except smtplib.SMTPException as e:
        res['auth'] = getattr(e, 'smtp_code', -1)
for i in range(a.get('count', 1)):
    m = EmailMessage()
    m['From'] = 'Backup job <nas@example.org>'
    m['To'] = ', '.join(a['rcpts'])
    m['Subject'] = a['subject'].replace('{i}', str(i))
    m.set_content(a['body'].replace('{i}', str(i)))
    r = {'mail': s.mail(a.get('from', 'nas@example.org')), 'rcpt': [s.rcpt(x) for x in a['rcpts']]}
    if any(c == 250 for c, _ in r['rcpt']):
        r['data'] = s.data(m.as_bytes())
    else:
        s.rset()
    res['messages'].append(r)
try:
    s.quit()
except smtplib.SMTPException:
    pass
print(json.dumps(res, default=lambda b: b.decode('utf-8', 'replace')))
`;

interface PyReply {
  features: Record<string, string>;
  auth?: number;
  messages: { mail: [number, string]; rcpt: [number, string][]; data?: [number, string] }[];
}

async function py(args: Record<string, unknown>): Promise<PyReply> {
  const r = await run(DEBIAN_PYTHON, ['-c', PY_SEND, JSON.stringify(args)]);
  if (r.code !== 0) throw new Error(`python smtplib failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout) as PyReply;
}

/** swaks against the listener; its transcript ("<-" replies, "<**" error replies) and exit code. */
const swaks = (port: number, args: string[]) =>
  run(SWAKS, [
    '--server',
    '127.0.0.1',
    '--port',
    String(port),
    '--from',
    'nas@example.org',
    '--helo',
    'nas.local',
    '--timeout',
    '20',
    ...args,
  ]);

const tokenOf = (p: { webhook_url: string }) => p.webhook_url.split('/').pop()!;

interface Rig {
  s: TestService;
  port: number;
  open: any;
  locked: any;
  openToken: string;
  lockedToken: string;
  sink: Awaited<ReturnType<typeof startSink>>;
}

/** A service with the listener, an open provider and one requiring AUTH, both linked to a recorder target. */
async function rig(t: Test, env: Record<string, string> = {}, dataDir?: string): Promise<Rig> {
  ensureBinary(SWAKS);
  ensurePeer(
    'swaks with STARTTLS (libnet-ssleay-perl)',
    () => spawnSync('perl', ['-MNet::SSLeay', '-e', '1']).status === 0,
  );
  ensureBinary(DEBIAN_PYTHON);
  const port = await freePort();
  const sink = await startSink();
  const s = await startService(
    {
      SERVICE_PLUGINS: plugins('@herald/provider-email-in'),
      SERVICE_SMTP_PORT: String(port),
      SERVICE_SMTP_MAX_BYTES: String(MAX_BYTES),
      ...env,
    },
    { dataDir },
  );
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const target = await recorder(s, sink.url);
  const open = (await chain(s, { provider: { kind: 'email_in', name: 'NAS', config: {} }, target })).provider;
  const locked = (
    await chain(s, { provider: { kind: 'email_in', name: 'Router', config: { require_auth: true } }, target })
  ).provider;
  return { s, port, open, locked, openToken: tokenOf(open), lockedToken: tokenOf(locked), sink };
}

/** Holds every event write until `release()`; `writing` resolves once one has started. */
function holdWrites(s: TestService) {
  const relay = s.service.core.services.get('relay') as { ingestWith: (...a: unknown[]) => Promise<unknown> };
  const original = relay.ingestWith;
  let release!: () => void;
  const gate = new Promise<void>((res) => {
    release = res;
  });
  let reached!: () => void;
  const writing = new Promise<void>((res) => {
    reached = res;
  });
  relay.ingestWith = async function (this: unknown, ...args: unknown[]) {
    reached();
    await gate;
    return original.apply(this, args);
  };
  return {
    writing,
    release,
    restore: () => {
      delete (relay as Partial<typeof relay>).ingestWith;
    },
  };
}

const countRows = async (s: TestService, table: 'event_log' | 'webhook_payload_log') =>
  Number((await s.service.core.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))!.n);

/** The message the recorder received with this title. */
const delivered = (r: Rig, title: string) =>
  until(`"${title}" at the target`, () => r.sink.received.find((m) => m.body.plainTitle === title)?.body);

t.test('config: the SERVICE_SMTP_* variables are checked at boot', async (t) => {
  const base = { SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex'), SERVICE_DATA_DIR: '/tmp' };
  t.equal(loadConfig(base).smtp, undefined, 'off without SERVICE_SMTP_PORT');
  t.same(
    loadConfig({ ...base, SERVICE_HOST: '10.0.0.5', SERVICE_SMTP_PORT: '2525' }).smtp,
    { port: 2525, host: '10.0.0.5', tlsCert: undefined, tlsKey: undefined, maxBytes: 1048576 },
    'on, on the service host, 1 MiB',
  );
  t.same(
    loadConfig({
      ...base,
      SERVICE_SMTP_PORT: '25',
      SERVICE_SMTP_HOST: '127.0.0.1',
      SERVICE_SMTP_MAX_BYTES: '1024',
      SERVICE_SMTP_TLS_CERT: '/c.pem',
      SERVICE_SMTP_TLS_KEY: '/k.pem',
    }).smtp,
    { port: 25, host: '127.0.0.1', tlsCert: '/c.pem', tlsKey: '/k.pem', maxBytes: 1024 },
  );
  t.equal(
    loadConfig({ ...base, SERVICE_SMTP_PORT: '65535', SERVICE_SMTP_MAX_BYTES: String(25 * 1024 * 1024) }).smtp
      ?.maxBytes,
    25 * 1024 * 1024,
    'the largest limit',
  );
  const refuse = (env: Record<string, string>, re: RegExp) =>
    t.throws(
      () => loadConfig({ ...base, ...env }),
      { constructor: ConfigurationError, message: re },
      JSON.stringify(env),
    );
  refuse({ SERVICE_SMTP_PORT: '0' }, /^SERVICE_SMTP_PORT must be a port number 1-65535, got "0"$/);
  refuse({ SERVICE_SMTP_PORT: '65536' }, /SERVICE_SMTP_PORT must be a port number 1-65535, got "65536"/);
  refuse({ SERVICE_SMTP_PORT: 'smtp' }, /SERVICE_SMTP_PORT must be a port number/);
  refuse({ SERVICE_SMTP_PORT: '8080' }, /SERVICE_SMTP_PORT must differ from SERVICE_PORT \(both are 8080\)/);
  refuse(
    { SERVICE_SMTP_PORT: '2525', SERVICE_SMTP_MAX_BYTES: '1023' },
    /SERVICE_SMTP_MAX_BYTES must be 1024-26214400 bytes, got 1023/,
  );
  refuse(
    { SERVICE_SMTP_PORT: '2525', SERVICE_SMTP_MAX_BYTES: String(25 * 1024 * 1024 + 1) },
    /SERVICE_SMTP_MAX_BYTES must be/,
  );
  refuse({ SERVICE_SMTP_PORT: '2525', SERVICE_SMTP_MAX_BYTES: '1 MiB' }, /SERVICE_SMTP_MAX_BYTES is invalid/);
  refuse(
    { SERVICE_SMTP_PORT: '2525', SERVICE_SMTP_TLS_CERT: '/c.pem' },
    /SERVICE_SMTP_TLS_CERT and SERVICE_SMTP_TLS_KEY go together/,
  );
  refuse({ SERVICE_SMTP_HOST: '0.0.0.0' }, /SERVICE_SMTP_HOST is set but SERVICE_SMTP_PORT is not/);

  // The real entry point: one line on stderr, exit 1, for a bad port and for a certificate that cannot be read.
  const dir = scratch('smtp-config');
  t.teardown(() => dir.cleanup());
  const boot = (env: Record<string, string>) =>
    new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['core/src/main.ts'],
        {
          cwd: new URL('../..', import.meta.url).pathname,
          encoding: 'utf8',
          timeout: 60_000,
          env: {
            PATH: process.env.PATH,
            NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE,
            SERVICE_SECRET_KEY: base.SERVICE_SECRET_KEY,
            SERVICE_DATA_DIR: fs.mkdtempSync(path.join(dir.dir, 'data-')),
            SERVICE_PORT: '0',
            SERVICE_HOST: '127.0.0.1',
            SERVICE_PLUGINS: '@herald/provider-bridge-self,@herald/provider-email-in',
            SERVICE_LOG_LEVEL: 'ERROR',
            ...env,
          },
        },
        (_err, _stdout, stderr) => resolve({ status: child.exitCode, stderr: String(stderr) }),
      );
    });
  const lines = (stderr: string) =>
    stderr
      .trim()
      .split('\n')
      .filter((l) => !/ExperimentalWarning|--trace-warnings/.test(l));
  const missing = path.join(dir.dir, 'missing.pem');
  const [badPort, badCert] = await Promise.all([
    boot({ SERVICE_SMTP_PORT: '99999' }),
    boot({
      SERVICE_SMTP_PORT: String(await freePort()),
      SERVICE_SMTP_TLS_CERT: missing,
      SERVICE_SMTP_TLS_KEY: missing,
    }),
  ]);
  t.equal(badPort.status, 1);
  t.same(lines(badPort.stderr), [
    'herald: refusing to start: SERVICE_SMTP_PORT must be a port number 1-65535, got "99999"',
  ]);
  t.equal(badCert.status, 1);
  t.same(lines(badCert.stderr), [
    `herald: refusing to start: SERVICE_SMTP_TLS_CERT "${missing}" cannot be read: ENOENT`,
  ]);
});

t.test(
  'mail in over plain SMTP: smtplib and swaks, AUTH, refusals at RCPT, size, durability, rate limit, shutdown',
  async (t) => {
    const dir = scratch('smtp-data');
    const r = await rig(t, {}, dir.dir);
    t.teardown(() => dir.cleanup());
    const { s, port, openToken, lockedToken } = r;
    const events = (p: { id: string }) => eventRows(s, p.id);

    await t.test('smtplib: plain mail is accepted once its event is written, and reaches the target', async (t) => {
      const out = await py({
        port,
        rcpts: [`${openToken}@herald.local`],
        subject: 'Резервное копирование завершено',
        body: 'Задача "Фото" завершена.\nСкопировано 3 ГБ.',
      });
      t.equal(out.features.size, String(MAX_BYTES), 'EHLO advertises SIZE');
      t.notOk('starttls' in out.features, 'no STARTTLS without a certificate (never a built-in one)');
      t.match(out.features.auth, /PLAIN/);
      t.match(out.features.auth, /LOGIN/);
      const m = out.messages[0]!;
      t.same(
        m.rcpt.map(([c]) => c),
        [250],
      );
      t.same(m.data, [250, 'OK: 1 event recorded']);
      // Read right after the client returned: the reply came after the write.
      const [e] = await events(r.open);
      t.match(e!.payload, {
        title: 'Резервное копирование завершено',
        body: 'Задача "Фото" завершена.\nСкопировано 3 ГБ.',
        from: 'nas@example.org',
        from_name: 'Backup job',
        to: ['********@herald.local'],
        attachments: [],
        source_ip: '127.0.0.1',
      });
      const msg = await delivered(r, 'Резервное копирование завершено');
      t.match(
        msg.plainBody,
        /^Задача "Фото" завершена\.\nСкопировано 3 ГБ\.\n\nFrom: Backup job \(nas@example\.org\)$/,
      );
    });

    await t.test('the 250 is held until the event row exists', async (t) => {
      const { writing, release, restore } = holdWrites(s);
      t.teardown(restore);
      const before = (await events(r.open)).length;
      let replied = false;
      const sending = py({ port, rcpts: [`${openToken}@herald.local`], subject: 'Held', body: 'held body' }).finally(
        () => {
          replied = true;
        },
      );
      await writing;
      t.notOk(replied, 'the client has no reply while the event is being written');
      t.equal((await events(r.open)).length, before, 'nothing written yet');
      release();
      const out = await sending;
      t.same(out.messages[0]!.data, [250, 'OK: 1 event recorded']);
      t.equal((await events(r.open)).length, before + 1);
    });

    await t.test('a failure to record answers 451; the retry of the same message counts once', async (t) => {
      const relay = s.service.core.services.get('relay') as { ingestWith: (...a: unknown[]) => Promise<unknown> };
      const before = (await events(r.open)).length;
      relay.ingestWith = async () => {
        throw new Error('the disk is full (test)');
      };
      const args = { port, rcpts: [`${openToken}@herald.local`], subject: 'Retried', body: 'same bytes each time' };
      const failed = await py(args);
      delete (relay as Partial<typeof relay>).ingestWith;
      t.equal(failed.messages[0]!.data![0], 451, 'a temporary failure: the sender keeps the message');
      t.match(failed.messages[0]!.data![1], /try again later/);
      t.equal((await events(r.open)).length, before, 'nothing recorded');
      t.same((await py(args)).messages[0]!.data, [250, 'OK: 1 event recorded'], 'the retry is recorded');
      t.same(
        (await py(args)).messages[0]!.data,
        [250, 'OK: 0 events recorded'],
        'a copy sent again is acknowledged and not recorded twice',
      );
      t.equal((await events(r.open)).filter((e) => e.payload.title === 'Retried').length, 1);
      const log = await payloadLog(s, r.open.id);
      t.ok(
        log.some((l) => l.status_code === 500 && /SMTP 451/.test(l.error_message)),
        "the failure is in the provider's log",
      );
    });

    await t.test('swaks: plain, HTML and an attachment; the token matched whatever its case', async (t) => {
      const plain = await swaks(port, [
        '--to',
        `${openToken}@nas-alerts.example`,
        '--header',
        'Subject: Disk 2 degraded',
        '--body',
        'RAID volume 1 is degraded.',
      ]);
      t.equal(plain.code, 0, 'swaks exits 0', { stdout: plain.stdout, stderr: plain.stderr });
      t.match(plain.stdout, /<- {2}250 OK: 1 event recorded/);
      t.match(await delivered(r, 'Disk 2 degraded'), {
        plainBody: /^RAID volume 1 is degraded\.\n\nFrom: nas@example\.org$/,
        severity: 'warning',
      });

      const html = await swaks(port, [
        '--to',
        `${openToken.toLowerCase()}@herald.local`,
        '--header',
        'Subject: Router report',
        '--add-header',
        'Content-Type: text/html; charset=utf-8',
        '--body',
        '<p>Uptime <b>12 days</b></p><p>WAN: up</p>',
      ]);
      t.equal(html.code, 0, 'swaks exits 0', { stdout: html.stdout, stderr: html.stderr });
      t.match((await delivered(r, 'Router report')).plainBody, /Uptime 12 days\n+WAN: up/, 'the HTML part as text');

      const dir = scratch('smtp-attach');
      t.teardown(() => dir.cleanup());
      const file = path.join(dir.dir, 'backup-log.txt');
      fs.writeFileSync(file, 'secret attachment content\n');
      const att = await swaks(port, [
        '--to',
        `${openToken}@herald.local`,
        '--header',
        'Subject: Backup FAILED',
        '--body',
        'See the log.',
        '--attach-type',
        'text/plain',
        '--attach',
        `@${file}`,
      ]);
      t.equal(att.code, 0, 'swaks exits 0', { stdout: att.stdout, stderr: att.stderr });
      const e = (await events(r.open)).find((x) => x.payload.title === 'Backup FAILED')!;
      t.same(e.payload.attachments, ['backup-log.txt'], 'the attachment by name');
      t.notMatch(JSON.stringify(e.payload), /secret attachment content/, 'its content is not kept');
      t.match(await delivered(r, 'Backup FAILED'), {
        plainBody: /See the log\.\n\nAttachments:\n- backup-log\.txt\n\nFrom: nas@example\.org/,
        severity: 'critical',
      });
    });

    await t.test('an unknown recipient is refused at RCPT (550) and nothing is recorded', async (t) => {
      const before = [await countRows(s, 'event_log'), await countRows(s, 'webhook_payload_log')];
      const unknown = await swaks(port, [
        '--to',
        'nobody-0000000000000000000000@herald.local',
        '--header',
        'Subject: x',
      ]);
      t.equal(unknown.code, 24, 'swaks: no RCPT accepted');
      t.match(unknown.stdout, /<\*\* 550 No such mailbox here/);
      const short = await swaks(port, ['--to', 'postmaster@herald.local']);
      t.match(short.stdout, /<\*\* 550/);
      t.same(
        [await countRows(s, 'event_log'), await countRows(s, 'webhook_payload_log')],
        before,
        'no event, no log row',
      );
    });

    await t.test('AUTH: PLAIN and LOGIN with the token; a provider requiring it refuses others at RCPT', async (t) => {
      const anonymous = await swaks(port, ['--to', `${lockedToken}@herald.local`, '--header', 'Subject: anonymous']);
      t.equal(anonymous.code, 24);
      t.match(anonymous.stdout, /<\*\* 530 .*Authentication required/);
      const otherToken = await swaks(port, [
        '--to',
        `${lockedToken}@herald.local`,
        '--auth',
        'LOGIN',
        '--auth-user',
        'nas',
        '--auth-password',
        openToken,
        '--header',
        'Subject: wrong mailbox',
      ]);
      t.equal(otherToken.code, 24, "authenticated, but with another provider's token");
      t.match(otherToken.stdout, /<\*\* 530/);
      const wrong = await swaks(port, [
        '--to',
        `${lockedToken}@herald.local`,
        '--auth',
        'PLAIN',
        '--auth-user',
        'nas',
        '--auth-password',
        'not-a-token-0000000000',
      ]);
      t.equal(wrong.code, 28, 'swaks: AUTH failed');
      t.match(wrong.stdout, /<\*\* 535 /);

      const login = await swaks(port, [
        '--to',
        `${lockedToken}@herald.local`,
        '--auth',
        'LOGIN',
        '--auth-user',
        'router',
        '--auth-password',
        lockedToken,
        '--header',
        'Subject: WAN link down',
        '--body',
        'PPPoE session lost at 10:00.',
      ]);
      t.equal(login.code, 0, 'swaks exits 0', { stdout: login.stdout, stderr: login.stderr });
      t.match(login.stdout, /<- {2}235 /);
      t.match(await delivered(r, 'WAN link down'), { plainBody: /^PPPoE session lost at 10:00\./ });
      const plain = await py({
        port,
        auth: ['anyone', lockedToken],
        rcpts: [`${lockedToken}@herald.local`],
        subject: 'Firmware update available',
        body: 'Version 7.1',
      });
      t.equal(plain.auth, 235, 'AUTH PLAIN (smtplib) in plain text: no certificate is configured');
      t.same(plain.messages[0]!.data, [250, 'OK: 1 event recorded']);
      await delivered(r, 'Firmware update available');
      t.equal((await events(r.locked)).length, 2, 'only the authenticated mails were recorded');
      const log = await payloadLog(s, r.locked.id);
      t.equal(
        log.filter((l) => l.status_code === 401 && /^SMTP 530 at RCPT/.test(l.error_message)).length,
        2,
        "each refusal is in the provider's log",
      );
    });

    await t.test("a disabled provider's address is refused; the webhook URL takes the raw message too", async (t) => {
      const target = await recorder(s, r.sink.url, 'Rec 2');
      const { provider: off } = await chain(s, {
        provider: { kind: 'email_in', name: 'Printer', config: {}, enabled: false },
        target,
      });
      const refused = await swaks(port, [
        '--to',
        `${tokenOf(off)}@herald.local`,
        '--header',
        'Subject: to a disabled provider',
      ]);
      t.equal(refused.code, 24);
      t.match(refused.stdout, /<\*\* 550 This mailbox is disabled/);
      t.match((await payloadLog(s, off.id))[0], {
        status_code: 409,
        error_message: /^SMTP 550 at RCPT: provider is disabled/,
      });

      const raw = [
        'From: "Cron" <cron@example.org>',
        `To: ${openToken}@herald.local`,
        'Subject: Posted over HTTP',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'curl --data-binary',
        '',
      ].join('\r\n');
      const posted = await s.request('POST', new URL(r.open.webhook_url).pathname, {
        raw,
        headers: { 'content-type': 'message/rfc822' },
      });
      t.equal(posted.status, 202);
      t.match(await delivered(r, 'Posted over HTTP'), {
        plainBody: /^curl --data-binary\n\nFrom: Cron \(cron@example\.org\)$/,
      });
    });

    await t.test('three failed AUTH attempts close the connection', async (t) => {
      const c = net.connect(port, '127.0.0.1');
      let got = '';
      c.on('data', (d) => {
        got += d.toString('utf8');
      });
      const closed = new Promise<void>((res) => c.once('close', () => res()));
      const replies = () =>
        got
          .split('\r\n')
          .filter((l) => /^\d{3} /.test(l))
          .map((l) => l.slice(0, 3));
      const nth = (n: number) => until(`reply ${n}`, () => replies().length >= n);
      await nth(1);
      c.write('EHLO nas.local\r\n');
      await nth(2);
      const wrong = Buffer.from('\0nas\0wrong-password-0000000000').toString('base64');
      for (let i = 0; i < 3; i++) {
        c.write(`AUTH PLAIN ${wrong}\r\n`);
        await nth(3 + i);
      }
      await closed;
      t.same(replies(), ['220', '250', '535', '535', '421']);
    });

    await t.test('several recipients: one event per provider', async (t) => {
      const before = [(await events(r.open)).length, (await events(r.locked)).length];
      const out = await py({
        port,
        auth: ['nas', lockedToken],
        rcpts: [`${openToken}@a.example`, `${openToken}@b.example`, `${lockedToken}@herald.local`],
        subject: 'To both',
        body: 'one message, two providers',
      });
      t.same(
        out.messages[0]!.rcpt.map(([c]) => c),
        [250, 250, 250],
      );
      t.same(out.messages[0]!.data, [250, 'OK: 2 events recorded']);
      t.same([(await events(r.open)).length, (await events(r.locked)).length], [before[0]! + 1, before[1]! + 1]);
    });

    await t.test('size: SIZE advertised, a message under it accepted, one over it refused with 552', async (t) => {
      const dir = scratch('smtp-size');
      t.teardown(() => dir.cleanup());
      const body = (n: number) => {
        const f = path.join(dir.dir, `body-${n}`);
        fs.writeFileSync(f, `${'x'.repeat(99)}\n`.repeat(n / 100));
        return f;
      };
      const under = await swaks(port, [
        '--to',
        `${openToken}@herald.local`,
        '--header',
        'Subject: Under the limit',
        '--body',
        `@${body(60_000)}`,
      ]);
      t.equal(under.code, 0, 'a 60 kB message is accepted');
      const before = (await events(r.open)).length;
      const over = await swaks(port, [
        '--to',
        `${openToken}@herald.local`,
        '--header',
        'Subject: Over the limit',
        '--body',
        `@${body(70_000)}`,
      ]);
      t.equal(over.code, 26, 'swaks: the message was not accepted after DATA');
      t.match(over.stdout, new RegExp(`<\\*\\* 552 .*${MAX_BYTES}`));
      t.equal((await events(r.open)).length, before, 'nothing recorded');
      t.match((await payloadLog(s, r.open.id))[0], { status_code: 413, error_message: /^SMTP 552/ });
    });

    await t.test('a flood from one address is refused with a temporary error; other addresses go on', async (t) => {
      const before = (await events(r.open)).length;
      // From 127.0.0.2 (loopback too), whose counter starts at zero: 60 a minute, the 61st refused.
      const out = await py({
        port,
        source: '127.0.0.2',
        count: 61,
        rcpts: [`${openToken}@herald.local`],
        subject: 'Flood {i}',
        body: 'n {i}',
      });
      const codes = out.messages.map((m) => m.rcpt[0]![0]);
      t.same(codes.slice(0, 60), Array(60).fill(250), 'the first 60 are accepted');
      t.equal(codes[60], 450, 'the 61st is refused for now');
      t.match(out.messages[60]!.rcpt[0]![1], /at most 60 a minute.*try again in \d+ s/);
      t.ok(out.messages.slice(0, 60).every((m) => m.data?.[0] === 250));
      t.equal((await events(r.open)).length, before + 60, 'only the accepted ones were recorded');
      t.match((await payloadLog(s, r.open.id))[0], { status_code: 429, source_ip: '127.0.0.2' });
      const other = await py({
        port,
        rcpts: [`${openToken}@herald.local`],
        subject: 'After the flood',
        body: 'from 127.0.0.1',
      });
      t.same(other.messages[0]!.data, [250, 'OK: 1 event recorded'], 'another address is not held back');
    });

    await t.test('the token is never in the logs, and masked in the payload log', async (t) => {
      const text = s.logText();
      for (const token of [openToken, lockedToken]) {
        t.notOk(text.includes(token), 'no token in the service log');
        t.notOk(text.toLowerCase().includes(token.toLowerCase()), 'not even lower-cased');
      }
      t.ok(
        s.logs().some((l) => l.msg === 'mail accepted'),
        'accepted mails are logged',
      );
      const excerpts = (await payloadLog(s, r.open.id))
        .map((l) => l.payload_excerpt)
        .filter(Boolean)
        .join('\n');
      t.match(excerpts, /\*{8}@herald\.local/);
      t.notOk(excerpts.toLowerCase().includes(openToken.toLowerCase()), 'no token in the excerpts');
    });

    await t.test('shutdown: a message in flight is recorded and answered, then idle connections get 421', async (t) => {
      const socket = net.connect(port, '127.0.0.1');
      let received = '';
      socket.on('data', (d) => {
        received += d.toString('utf8');
      });
      const closed = new Promise<void>((res) => socket.once('close', () => res()));
      await until('the greeting', () => /^220 /.test(received));
      t.match(received, /ESMTP Herald/);
      const { writing, release } = holdWrites(s);
      const sending = py({
        port,
        rcpts: [`${openToken}@herald.local`],
        subject: 'In flight at shutdown',
        body: 'must not be lost',
      });
      await writing;
      const stopping = s.stop();
      const refused = await new Promise<boolean>((res) => {
        const c = net.connect(port, '127.0.0.1');
        c.once('error', () => res(true));
        c.once('connect', () => {
          c.destroy();
          res(false);
        });
      });
      t.ok(refused, 'no new connections once shutdown began');
      release();
      const out = await sending;
      t.same(out.messages[0]!.data, [250, 'OK: 1 event recorded'], 'the message in flight was answered');
      await stopping;
      await closed;
      t.match(received, /\r\n421 .*shutting down/, 'the idle connection was told to come back later');
      const row = await readStoppedDatabase<{ n: number }>(
        s.dataDir,
        "SELECT COUNT(*) AS n FROM event_log WHERE provider_id = ? AND payload LIKE '%In flight at shutdown%'",
        [r.open.id],
      );
      t.equal(Number(row!.n), 1, 'and its event is in the database');
    });
  },
);

t.test('STARTTLS with a configured certificate; AUTH waits for it', async (t) => {
  const dir = scratch('smtp-tls');
  t.teardown(() => dir.cleanup());
  const cert = path.join(dir.dir, 'cert.pem');
  const key = path.join(dir.dir, 'key.pem');
  const made = await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '1',
    '-subj',
    '/CN=herald.test',
  ]);
  t.equal(made.code, 0, made.stderr);
  const r = await rig(t, { SERVICE_SMTP_TLS_CERT: cert, SERVICE_SMTP_TLS_KEY: key });
  const { port, openToken, lockedToken } = r;

  const clear = await py({
    port,
    auth: ['nas', lockedToken],
    rcpts: [`${openToken}@herald.local`],
    subject: 'Without TLS',
    body: 'still accepted',
  });
  t.ok('starttls' in clear.features, 'STARTTLS is offered');
  t.equal(clear.auth, 538, 'AUTH in plain text is refused once TLS is available');
  t.same(clear.messages[0]!.data, [250, 'OK: 1 event recorded'], 'mail without AUTH still works without TLS');

  const tls = await swaks(port, [
    '--tls',
    '--to',
    `${lockedToken}@herald.local`,
    '--auth',
    'PLAIN',
    '--auth-user',
    'nas',
    '--auth-password',
    lockedToken,
    '--header',
    'Subject: Over TLS',
    '--body',
    'encrypted and authenticated',
  ]);
  t.equal(tls.code, 0, 'swaks exits 0', { stdout: tls.stdout, stderr: tls.stderr });
  t.match(tls.stdout, /-> STARTTLS/);
  t.match(tls.stdout, /=== TLS started with cipher/);
  t.match(tls.stdout, /~> AUTH PLAIN/, 'AUTH inside the TLS session');
  t.match(tls.stdout, /<~ {2}250 OK: 1 event recorded/);
  t.match(await delivered(r, 'Over TLS'), { plainBody: /^encrypted and authenticated/ });
  const [e] = await eventRows(r.s, r.locked.id);
  t.equal(e!.payload.title, 'Over TLS');
});
