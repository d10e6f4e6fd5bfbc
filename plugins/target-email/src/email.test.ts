import type { OutboundHttp, TargetInstance } from '@herald/plugin-api';
import { errorCode } from '@herald/plugin-api';
import { createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import type { FakeSmtpOptions } from '../test/fakes/smtp.ts';
import { FakeSmtp, selfSignedCert } from '../test/fakes/smtp.ts';
import { leaves, parseMime } from '../test/mime.ts';
import plugin from './index.ts';

const PEM = selfSignedCert('mail.test');
const USERS = { herald: 'p4ss-w0rd!' };

/** An outbound client whose DNS knows `mail.test` (loopback) and refuses `intranet.test` like the real policy does. */
function fakeResolver(resolved: string[]): OutboundHttp {
  const fail = (code: string, message: string) => Object.assign(new Error(message), { code });
  return {
    request: () => Promise.reject(new Error('not used')),
    fetch: (() => Promise.reject(new Error('not used'))) as typeof fetch,
    async resolveAllowed(host) {
      resolved.push(host);
      if (host === 'mail.test') return { address: '127.0.0.1', family: 4 };
      if (host === 'intranet.test')
        throw fail('OUTBOUND_REFUSED', 'refused to connect to intranet.test: 10.1.2.3 is private');
      throw fail('OUTBOUND_DNS', `cannot resolve ${host}: ENOTFOUND`);
    },
  };
}

async function setup(
  t: { teardown(fn: () => unknown): void },
  server: FakeSmtpOptions,
  config: Record<string, unknown> = {},
) {
  const smtp = await new FakeSmtp({ users: USERS, ...server }, PEM).start();
  const resolved: string[] = [];
  const host = createTestHost({ http: fakeResolver(resolved) });
  const harness = await host.target(plugin, {
    host: 'mail.test',
    port: smtp.port,
    username: 'herald',
    password: USERS.herald,
    allow_self_signed: true,
    from: 'Herald <herald@example.org>',
    to: ['ops@example.org'],
    ...config,
  });
  const instances: TargetInstance[] = [harness.instance];
  t.teardown(async () => {
    for (const i of instances) await i.stop?.();
    await smtp.close();
  });
  return { smtp, resolved, host, ...harness };
}

const opts = () => ({ signal: AbortSignal.timeout(10_000), attempt: 1 });

async function thrown(fn: () => Promise<unknown>): Promise<any> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

t.test('sends multipart/alternative over STARTTLS with AUTH, Cyrillic intact', async (t) => {
  const { smtp, resolved, instance, message } = await setup(
    t,
    {},
    { to: ['ops@example.org', 'boss@example.org'], subject_prefix: '[Herald]' },
  );
  const res = await instance.send(
    message({
      deliveryId: 'del-42',
      locale: 'ru',
      severity: 'critical',
      eventType: 'disk_low',
      title: 'Диск &lt;sda&gt; почти заполнен',
      body: 'Свободно <b>5%</b> &amp; падает\nВторая строка',
      plainTitle: 'Диск <sda> почти заполнен',
      plainBody: 'Свободно 5% & падает\nВторая строка',
    }),
    opts(),
  );
  t.same(resolved, ['mail.test'], 'the host is resolved through the outbound policy');
  t.equal(smtp.received.length, 1);
  const got = smtp.received[0];
  t.equal(got.secure, true, 'STARTTLS was used');
  t.same(smtp.servernames, ['mail.test'], 'TLS asked for the host name, not the address');
  t.equal(got.user, 'herald');
  t.equal(got.from, 'herald@example.org');
  t.same(got.to, ['ops@example.org', 'boss@example.org']);

  const mail = parseMime(got.raw);
  t.equal(mail.type, 'multipart/alternative');
  t.equal(mail.headers.get('subject'), '[Herald] Диск <sda> почти заполнен');
  t.match(mail.headers.get('from'), /Herald <herald@example\.org>/);
  t.match(mail.headers.get('to'), /ops@example\.org, boss@example\.org/);
  t.equal(mail.headers.get('message-id'), '<del-42.herald@example.org>');
  t.equal(res?.remoteId, '<del-42.herald@example.org>');
  t.equal(mail.headers.get('auto-submitted'), 'auto-generated');
  t.equal(mail.headers.get('content-language'), 'ru');
  t.equal(mail.headers.get('x-priority'), '1 (Highest)');
  t.doesNotThrow(() => new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(got.raw)));
  t.notMatch(mail.headers.get('subject') ?? '', /=\?/, 'the encoded subject decodes fully');
  t.match(got.raw, /^Subject: =\?UTF-8\?[BQ]\?/im, 'the subject travels as encoded words');

  const [plain, html] = leaves(mail);
  t.equal(plain.type, 'text/plain');
  t.equal(plain.params.charset?.toLowerCase(), 'utf-8');
  t.equal(plain.body.trim(), 'Диск <sda> почти заполнен\n\nСвободно 5% & падает\nВторая строка');
  t.equal(html.type, 'text/html');
  t.match(html.body, '<h2 style="margin: 0 0 12px;">Диск &lt;sda&gt; почти заполнен</h2>');
  t.match(html.body, 'Свободно <b>5%</b> &amp; падает\nВторая строка');
});

t.test('implicit TLS (security tls)', async (t) => {
  const { smtp, instance, message } = await setup(t, { secure: true }, { security: 'tls' });
  await instance.send(message({ title: 'Hi', plainTitle: 'Hi' }), opts());
  t.equal(smtp.received.length, 1);
  t.equal(smtp.received[0].secure, true);
  t.equal(parseMime(smtp.received[0].raw).headers.get('subject'), 'Hi');
});

t.test('one pooled connection serves several sends and stop() closes it', async (t) => {
  const { smtp, instance, message } = await setup(t, {});
  await instance.start?.();
  for (let i = 0; i < 3; i++) await instance.send(message({ title: `n${i}`, plainTitle: `n${i}` }), opts());
  t.equal(smtp.received.length, 3);
  t.ok(smtp.connections <= 2, `${smtp.connections} connections (verify + one pooled)`);
  await instance.stop?.();
});

t.test('a wrong password is AuthFailedError at start and on send, without the password', async (t) => {
  const { smtp, instance, message } = await setup(t, {}, { password: 'wrong-secret' });
  const startErr = await thrown(async () => instance.start?.());
  t.equal(errorCode(startErr), 'AUTH_FAILED');
  const err = await thrown(() => instance.send(message(), opts()));
  t.equal(errorCode(err), 'AUTH_FAILED');
  t.match(err.message, /535/);
  t.notMatch(err.message, 'wrong-secret');
  t.equal(smtp.received.length, 0);
  t.ok(smtp.authAttempts.every((a) => !a.ok));
});

t.test('a 550 for the only recipient is PermanentSendError(550)', async (t) => {
  const { instance, message } = await setup(t, { rejectRecipients: ['ops@example.org'] });
  const err = await thrown(() => instance.send(message(), opts()));
  t.equal(errorCode(err), 'PERMANENT_SEND');
  t.equal(err.statusCode, 550);
  t.match(err.message, /Mailbox unavailable/);
});

t.test('a partly refused recipient list still delivers and reports the refusal', async (t) => {
  const { smtp, instance, message } = await setup(
    t,
    { rejectRecipients: ['gone@example.org'] },
    { to: ['ops@example.org', 'gone@example.org'] },
  );
  const res = await instance.send(message(), opts());
  t.same(smtp.received[0].to, ['ops@example.org']);
  t.equal(res?.detail, 'refused recipients: gone@example.org');
});

t.test('a 4xx reply is retryable', async (t) => {
  const { instance, message } = await setup(t, { tempFail: true });
  const err = await thrown(() => instance.send(message(), opts()));
  t.equal(errorCode(err), 'RETRYABLE_SEND');
  t.equal(err.statusCode, 0);
  t.match(err.message, /451/);
});

t.test('connection refused is retryable on send and NotReady at start', async (t) => {
  const { smtp, instance, message } = await setup(t, {});
  await smtp.close();
  t.equal(errorCode(await thrown(async () => instance.start?.())), 'NOT_READY');
  const err = await thrown(() => instance.send(message(), opts()));
  t.equal(errorCode(err), 'RETRYABLE_SEND');
  t.equal(err.statusCode, 0);
});

t.test('certificates are verified unless allow_self_signed is set', async (t) => {
  const { smtp, instance, message } = await setup(t, {}, { allow_self_signed: false });
  const err = await thrown(() => instance.send(message(), opts()));
  t.equal(errorCode(err), 'RETRYABLE_SEND');
  t.match(err.message, /certificate/i);
  t.equal(smtp.received.length, 0);
  t.equal(smtp.authAttempts.length, 0, 'no credentials were sent');
});

t.test('starttls refuses to go on when the server offers no STARTTLS', async (t) => {
  const { smtp, instance, message } = await setup(t, { noStartTls: true });
  const err = await thrown(() => instance.send(message(), opts()));
  t.equal(errorCode(err), 'PERMANENT_SEND', 'a server without TLS will not grow it by retrying');
  t.match(err.message, /STARTTLS/);
  t.equal(smtp.received.length, 0);
  t.equal(smtp.authAttempts.length, 0, 'the password never crossed a plain connection');
});

t.test('security none sends in plain text without STARTTLS', async (t) => {
  const { smtp, instance, message } = await setup(
    t,
    { noStartTls: true, users: {} },
    { security: 'none', username: undefined, password: undefined },
  );
  await instance.send(message(), opts());
  t.equal(smtp.received[0].secure, false);
});

t.test('an address refused by the outbound policy is a config problem', async (t) => {
  const { instance, message } = await setup(t, {}, { host: 'intranet.test' });
  t.equal(errorCode(await thrown(async () => instance.start?.())), 'CONFIG');
  const err = await thrown(() => instance.send(message(), opts()));
  t.equal(errorCode(err), 'PERMANENT_SEND');
  t.match(err.message, /10\.1\.2\.3 is private/);
});

t.test('the default test host client reaches a loopback server by address', async (t) => {
  const smtp = await new FakeSmtp({}, PEM).start();
  const host = createTestHost();
  const { instance, message } = await host.target(plugin, {
    host: '127.0.0.1',
    port: smtp.port,
    security: 'starttls',
    allow_self_signed: true,
    from: 'h@example.org',
    to: ['a@example.org'],
  });
  t.teardown(async () => {
    await instance.stop?.();
    await smtp.close();
    await (host.http as { close?: () => Promise<void> }).close?.();
  });
  await instance.send(message(), opts());
  t.equal(smtp.received[0].secure, true);
  t.same(smtp.servernames, [], 'no SNI for an address');
});

t.test('configuration rules', async (t) => {
  const host = createTestHost({ http: fakeResolver([]) });
  const base = { host: 'mail.test', from: 'h@example.org', to: ['a@example.org'] };
  await t.rejects(host.target(plugin, { ...base, password: 'x' }), { code: 'CONFIG' });
  await t.rejects(host.target(plugin, { ...base, to: [] }), /to/);
  await t.rejects(
    host.target(plugin, { ...base, to: Array.from({ length: 51 }, (_, i) => `u${i}@example.org`) }),
    /to/,
  );
  await t.rejects(host.target(plugin, { ...base, to: ['Name <a@example.org>'] }), /to/);
  await t.rejects(host.target(plugin, { ...base, security: 'ssl' }), /security/);
});

t.test(
  'reply: a later event is a mail in reply to the first (In-Reply-To, References); email cannot edit',
  async (t) => {
    const { smtp, instance, message } = await setup(t, {});
    t.equal(instance.update, undefined, 'no update: a sent mail cannot change');
    const first = await instance.send(message({ deliveryId: 'd1', title: 'UPS on battery' }), opts());
    const root = String(first!.messageRef!.message_id);
    t.match(root, /^<d1\.herald@example\.org>$/);
    const r = await instance.reply!(
      {
        previous: { messageRef: first!.messageRef!, deliveryId: 'd1', eventType: 'ups_on_battery' },
        message: message({ deliveryId: 'd2', title: 'UPS back on line' }),
      },
      opts(),
    );
    const mail = parseMime(smtp.received[1]!.raw);
    t.equal(mail.headers.get('in-reply-to'), root);
    t.equal(mail.headers.get('references'), root);
    t.equal(mail.headers.get('message-id'), '<d2.herald@example.org>');
    t.equal((r as { messageRef?: { message_id?: unknown } }).messageRef?.message_id, '<d2.herald@example.org>');
    t.equal(
      await instance.reply!(
        { previous: { messageRef: { message_id: 'not an id' }, deliveryId: 'd1', eventType: 'x' }, message: message() },
        opts(),
      ),
      false,
    );
  },
);
