import type { InboundMail, MailEnvelope, ProviderInstance } from '@herald/plugin-api';
import { missingLocaleStrings } from '@herald/plugin-api';
import { checkConfig, checkEvent, createTestHost, validateConfig } from '@herald/plugin-api/testing';
import t from 'tap';
import { DEFAULT_CRITICAL_KEYWORDS, DEFAULT_WARNING_KEYWORDS } from './config.ts';
import plugin, { REPLAY_TTL_SECONDS } from './index.ts';
import { bounded, cleanBody, MAX_BODY, MAX_TITLE } from './parse.ts';
import { senderAllowed } from './senders.ts';
import { severityRule } from './severity.ts';

const TOKEN = 'Abc123_-xyzTOKENvalue0000000000000000000000';
const WEBHOOK_URL = `https://herald.example.org/api/hooks/${TOKEN}`;

/** An RFC 5322 message with CRLF line ends. */
const eml = (...lines: string[]) => Buffer.from(`${lines.join('\r\n')}\r\n`);

const PLAIN = eml(
  'From: "Synology NAS" <NAS@Example.org>',
  `To: ${TOKEN}@herald.local`,
  'Cc: ops@example.org',
  'Subject: Backup task finished',
  'Message-ID: <plain-1@nas.local>',
  'Date: Thu, 01 Jan 2026 03:12:00 +0000',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'The backup task "Photos" finished.   ',
  '',
  '',
  '',
  'Sent to ' + TOKEN + '@herald.local',
);

const HTML_ONLY = eml(
  'From: router@example.org',
  'To: somebody@herald.local',
  'Subject: WAN down',
  'Content-Type: text/html; charset=utf-8',
  '',
  '<html><body><h1>WAN link</h1><p>The <b>WAN</b> link went <i>down</i> at ' +
    '10:00.</p><script>alert(1)</script></body></html>',
);

const MULTIPART = eml(
  'From: printer@example.org',
  'To: x@herald.local',
  'Subject: Scan report',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="b1"',
  '',
  '--b1',
  'Content-Type: multipart/alternative; boundary="b2"',
  '',
  '--b2',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'Two pages were scanned.',
  '--b2',
  'Content-Type: text/html; charset=utf-8',
  '',
  '<p>Two pages were <b>scanned</b> (HTML).</p>',
  '--b2--',
  '--b1',
  'Content-Type: application/pdf; name="scan-0001.pdf"',
  'Content-Disposition: attachment; filename="scan-0001.pdf"',
  'Content-Transfer-Encoding: base64',
  '',
  Buffer.from('%PDF-1.4 not really').toString('base64'),
  '--b1',
  'Content-Type: text/plain; name="=?UTF-8?B?0L7RgtGH0ZHRgi50eHQ=?="',
  "Content-Disposition: attachment; filename*=UTF-8''%D0%BE%D1%82%D1%87%D1%91%D1%82.txt",
  '',
  'log line',
  '--b1',
  'Content-Type: application/octet-stream',
  'Content-Disposition: attachment',
  'Content-Transfer-Encoding: base64',
  '',
  Buffer.from([1, 2, 3]).toString('base64'),
  '--b1--',
);

const CYRILLIC = eml(
  'From: =?UTF-8?B?0JjQkdCfINCyINGB0LXRgNCy0LXRgNC90L7QuQ==?= <ups@example.org>',
  'To: x@herald.local',
  // "Ошибка: ИБП перешёл на батарею" in two encoded words (B and Q), folded.
  'Subject: =?UTF-8?B?0J7RiNC40LHQutCwOiDQmNCR0J8g?=',
  ' =?UTF-8?Q?=D0=BF=D0=B5=D1=80=D0=B5=D1=88=D1=91=D0=BB_=D0=BD=D0=B0_=D0=B1=D0=B0=D1=82=D0=B0=D1=80=D0=B5=D1=8E?=',
  'Content-Type: text/plain; charset=koi8-r',
  'Content-Transfer-Encoding: 8bit',
  '',
).subarray(0, -2);
const CYRILLIC_BODY = Buffer.concat([
  CYRILLIC,
  Buffer.from('\r\n'),
  Buffer.from([247, 206, 201, 205, 193, 206, 201, 197, 58, 32, 211, 197, 212, 216]),
  Buffer.from('\r\n'),
]);

const env = (o: Partial<MailEnvelope> = {}): MailEnvelope => ({
  from: 'nas@example.org',
  recipient: `${TOKEN}@herald.local`,
  ip: '192.0.2.10',
  authenticated: false,
  secure: false,
  ...o,
});
const mail = (raw: Buffer, o: Partial<MailEnvelope> = {}): InboundMail => ({ ...env(o), raw });

async function instance(config: Record<string, unknown> = {}) {
  const host = createTestHost();
  const h = await host.provider(plugin, config, { webhookUrl: WEBHOOK_URL });
  return { ...h, i: h.instance as ProviderInstance & Required<Pick<ProviderInstance, 'handleMail' | 'verifyMail'>> };
}

/** The shape of a WebhookRejectedError with this status (and message). */
const rej = (status: number, message?: RegExp) => ({
  code: 'WEBHOOK_REJECTED',
  status,
  ...(message ? { message } : {}),
});

t.test('manifest: a webhook-ingest provider that takes mail, complete in both languages', async (t) => {
  const m = plugin.manifest;
  t.equal(m.id, 'email_in');
  t.equal(m.ingest, 'webhook');
  t.same(m.mail, {});
  t.equal(m.webhook?.rateLimitPerMinute, 60);
  t.same(Object.keys(m.events!), ['email_received']);
  t.same(missingLocaleStrings(m, 'en'), []);
  t.same(missingLocaleStrings(m, 'ru'), []);
  t.ok(m.templates?.en?.email_received && m.templates?.ru?.email_received);
  checkEvent(plugin, { type: 'email_received', payload: m.events!.email_received!.example! });
  const cfg = validateConfig<Record<string, unknown>>(m.configSchema, {});
  t.same(cfg, {
    require_auth: false,
    allowed_senders: [],
    critical_keywords: DEFAULT_CRITICAL_KEYWORDS,
    warning_keywords: DEFAULT_WARNING_KEYWORDS,
  });
});

t.test(
  'connection: SMTP host, port, address and password with the listener on; a POST of the message with it off',
  async (t) => {
    const connect = plugin.manifest.webhook!.connection!;
    const on = connect('https://herald.example.org', TOKEN, {
      webhookUrl: WEBHOOK_URL,
      smtp: { host: 'mail.example.org', port: 2525 },
    });
    t.same(on.fields, [
      { key: 'smtp_host', value: 'mail.example.org' },
      { key: 'smtp_port', value: '2525' },
      { key: 'recipient', value: `${TOKEN}@herald.example.org`, secret: true },
      { key: 'smtp_password', value: TOKEN, secret: true },
    ]);
    t.equal(on.url, undefined, 'the webhook URL stays the address to paste');
    t.equal(
      on.example,
      `printf 'Subject: Backup done\\r\\n\\r\\nAll files copied.\\r\\n' | curl -sS smtp://mail.example.org:2525 ` +
        `--mail-from nas@example.org --mail-rcpt '${TOKEN}@herald.example.org' -T -`,
    );
    // The domain: the public host name, else the SMTP host's name, else herald.local (IP addresses are no domain).
    t.equal(
      connect('http://10.0.0.5:8080', TOKEN, { webhookUrl: WEBHOOK_URL, smtp: { host: 'nas.lan.example', port: 25 } })
        .fields![2]!.value,
      `${TOKEN}@nas.lan.example`,
    );
    const bare = connect('http://127.0.0.1:8080', TOKEN, { webhookUrl: WEBHOOK_URL, smtp: { host: '::1', port: 25 } });
    t.equal(bare.fields![2]!.value, `${TOKEN}@herald.local`);
    t.match(bare.example, /smtp:\/\/\[::1\]:25 /, 'an IPv6 host in brackets');
    t.equal(
      connect('http://localhost:8080', TOKEN, { webhookUrl: WEBHOOK_URL, smtp: { host: 'localhost', port: 25 } })
        .fields![2]!.value,
      `${TOKEN}@herald.local`,
    );

    const off = connect('https://herald.example.org', TOKEN, { webhookUrl: WEBHOOK_URL });
    t.same(off.fields, [], 'nothing but the webhook URL to paste');
    t.equal(
      off.example,
      `printf 'From: nas@example.org\\r\\nSubject: Backup done\\r\\n\\r\\nAll files copied.\\r\\n' | curl -sS -H ` +
        `'Content-Type: message/rfc822' --data-binary @- '${WEBHOOK_URL}'`,
    );
    t.match(
      connect('https://herald.example.org', TOKEN).example,
      `'${WEBHOOK_URL}'`,
      'a hook called with two arguments builds the webhook URL itself',
    );
  },
);

t.test('a plain message: subject, text, sender, recipients, message id; the token masked', async (t) => {
  const { i } = await instance();
  const r = await i.handleMail(mail(PLAIN, { ip: '198.51.100.7' }));
  t.equal(r.events.length, 1);
  const e = r.events[0]!;
  checkEvent(plugin, e);
  t.equal(e.type, 'email_received');
  t.equal(e.severity, 'info');
  t.same(e.payload, {
    title: 'Backup task finished',
    body: 'The backup task "Photos" finished.\n\nSent to ********@herald.local',
    from: 'nas@example.org',
    from_name: 'Synology NAS',
    to: ['********@herald.local', 'ops@example.org'],
    attachments: [],
    message_id: '<plain-1@nas.local>',
    source_ip: '198.51.100.7',
  });
  t.match(r.replayKey, { key: /^mail:[0-9a-f]{64}$/, ttlSeconds: REPLAY_TTL_SECONDS });
});

t.test('an HTML-only message: the HTML as text, without tags or scripts', async (t) => {
  const { i } = await instance();
  const e = (await i.handleMail(mail(HTML_ONLY))).events[0]!;
  checkEvent(plugin, e);
  t.equal(e.payload.title, 'WAN down');
  const body = e.payload.body as string;
  t.match(body, /WAN LINK/i);
  t.match(body, /The WAN link went down at 10:00\./);
  t.notMatch(body, /[<>]/, 'no markup left');
  t.notMatch(body, /alert\(1\)/, 'no script text');
  t.equal(e.payload.from, 'router@example.org');
  t.notOk('from_name' in e.payload);
  t.notOk('message_id' in e.payload, 'no Message-ID header, none in the payload');
});

t.test('multipart with attachments: the text part is the body, attachments by name only', async (t) => {
  const { i } = await instance();
  const e = (await i.handleMail(mail(MULTIPART))).events[0]!;
  checkEvent(plugin, e);
  t.equal(e.payload.body, 'Two pages were scanned.', 'the text/plain alternative, not the HTML');
  t.same(e.payload.attachments, ['scan-0001.pdf', 'отчёт.txt', 'unnamed (application/octet-stream)']);
  t.notMatch(JSON.stringify(e.payload), /PDF-1\.4|log line/, 'no attachment content in the payload');
});

t.test('encoded words (RFC 2047) and a Cyrillic body in KOI8-R are decoded', async (t) => {
  const { i } = await instance();
  const e = (await i.handleMail(mail(CYRILLIC_BODY))).events[0]!;
  checkEvent(plugin, e);
  t.equal(e.payload.title, 'Ошибка: ИБП перешёл на батарею');
  t.equal(e.payload.body, 'Внимание: сеть');
  t.equal(e.payload.from_name, 'ИБП в серверной');
  t.equal(e.severity, 'info', 'the default keywords are English');
});

t.test('severity: subject keywords, whole words, any case and script; configurable and removable', async (t) => {
  const rule = severityRule(DEFAULT_CRITICAL_KEYWORDS, DEFAULT_WARNING_KEYWORDS);
  t.equal(rule('Backup task FAILED on nas'), 'critical');
  t.equal(rule('[CRITICAL] disk 2'), 'critical');
  t.equal(rule('Disk error on /dev/sda'), 'warning');
  t.equal(rule('Error and failure'), 'critical', 'critical wins');
  t.equal(rule('Errorless run'), 'info', 'whole words only');
  t.equal(rule('Nightly report'), 'info');
  const ru = severityRule(['авария'], ['ошибка']);
  t.equal(ru('Ошибка: ИБП перешёл на батарею'), 'warning');
  t.equal(ru('АВАРИЯ питания'), 'critical');
  t.equal(ru('Ошибкам нет'), 'info', 'a longer word is not the keyword');
  t.equal(severityRule([], [])('failed error'), 'info', 'empty lists turn the rule off');
  const { i } = await instance({ critical_keywords: ['[crit]'], warning_keywords: [] });
  t.equal((await i.handleMail(mail(eml('Subject: [CRIT] fan stopped', '', 'x')))).events[0]!.severity, 'critical');
  t.equal(
    (await i.handleMail(mail(eml('Subject: Backup failed', '', 'x')))).events[0]!.severity,
    'info',
    'the defaults replaced',
  );
});

t.test('titles and bodies are bounded', async (t) => {
  const { i } = await instance();
  const long = eml(`Subject: ${'word '.repeat(200)}`, '', 'line\n'.repeat(2000));
  const e = (await i.handleMail(mail(long))).events[0]!;
  t.equal((e.payload.title as string).length, MAX_TITLE);
  t.ok((e.payload.title as string).endsWith('…'));
  t.ok((e.payload.body as string).length <= MAX_BODY);
  t.ok((e.payload.body as string).endsWith('…'));
  t.equal(bounded('😀😀😀', 4), '😀…', 'never cuts a surrogate pair');
  t.equal(cleanBody(' a \r\nb\r\n\r\n\r\n\r\nc \n'), 'a\nb\n\nc');
  const empty = (await i.handleMail(mail(eml('From: a@b.c', '', '')))).events[0]!;
  t.same(
    [empty.payload.title, empty.payload.body],
    ['', ''],
    'no subject and no text: empty strings, the template says who sent it',
  );
});

t.test('the sender filter: addresses exactly, domains with subdomains, at RCPT (verifyMail)', async (t) => {
  t.ok(senderAllowed([], 'anyone@anywhere'));
  t.ok(senderAllowed([], ''), 'no list: even the null sender');
  const list = ['nas@example.org', 'example.net', '@corp.example'];
  t.ok(senderAllowed(list, 'NAS@Example.ORG'));
  t.notOk(senderAllowed(list, 'other@example.org'), 'an address entry is one address');
  t.ok(senderAllowed(list, 'router@example.net'));
  t.ok(senderAllowed(list, 'ups@lab.example.net'), 'subdomains of a domain entry');
  t.notOk(senderAllowed(list, 'x@badexample.net'), 'not a suffix without the dot');
  t.ok(senderAllowed(list, 'a@corp.example'));
  t.notOk(senderAllowed(list, ''), 'the null sender is refused once there is a list');

  t.same(
    checkConfig(plugin, { allowed_senders: ['nas@example.org', 'example.net', '@corp.example', 'root@synology'] }),
    [],
  );
  t.throws(() => checkConfig(plugin, { allowed_senders: ['not an address'] }), /allowed_senders\/0/);
  t.throws(() => checkConfig(plugin, { allowed_senders: ['a@b@'] }), /allowed_senders\/0/);

  const { i } = await instance({ allowed_senders: ['nas@example.org', 'example.net'] });
  await t.resolves(Promise.resolve(i.verifyMail(env({ from: 'nas@example.org' }))));
  await t.resolves(Promise.resolve(i.verifyMail(env({ from: 'ups@lab.example.net' }))));
  t.throws(() => i.verifyMail(env({ from: 'spam@example.com' })), rej(403, /spam@example\.com.*not allowed/));
  t.throws(() => i.verifyMail(env({ from: '' })), rej(403));
});

t.test(
  'require_auth: an unauthenticated envelope is refused with 401 (530 at RCPT), an authenticated one passes',
  async (t) => {
    const open = await instance();
    await t.resolves(Promise.resolve(open.i.verifyMail(env())), 'off by default');
    const { i } = await instance({ require_auth: true });
    t.throws(() => i.verifyMail(env()), rej(401, /Authentication required/));
    await t.resolves(Promise.resolve(i.verifyMail(env({ authenticated: true, authUser: 'nas' }))));
    let message = '';
    try {
      i.verifyMail(env());
    } catch (err) {
      message = (err as Error).message;
    }
    t.notOk(message.includes(TOKEN), 'the refusal does not echo the token');
  },
);

t.test('a message seen before (a retry) raises no event once its replay key is stored', async (t) => {
  const { i, store } = await instance();
  const first = await i.handleMail(mail(PLAIN));
  t.equal(first.events.length, 1);
  await store.set(first.replayKey!.key, 1, { ttlSeconds: first.replayKey!.ttlSeconds });
  const again = await i.handleMail(mail(PLAIN));
  t.same(again.events, [], 'no event for the same bytes');
  t.equal((await i.handleMail(mail(HTML_ONLY))).events.length, 1, 'another message still counts');
});

t.test('the raw message POSTed to the webhook URL', async (t) => {
  const { i } = await instance({ allowed_senders: ['example.org'] });
  const r = await i.handleWebhook!({
    method: 'POST',
    headers: { 'content-type': 'message/rfc822' },
    rawBody: PLAIN,
    body: undefined,
    query: {},
    ip: '203.0.113.5',
  });
  t.equal(r.events.length, 1);
  t.match(r.events[0]!.payload, {
    title: 'Backup task finished',
    from: 'nas@example.org',
    source_ip: '203.0.113.5',
    to: ['********@herald.local', 'ops@example.org'],
  });
  await t.rejects(
    i.handleWebhook!({
      method: 'POST',
      headers: {},
      rawBody: eml('From: x@example.com', 'Subject: s', '', 'b'),
      body: undefined,
      query: {},
      ip: '203.0.113.5',
    }),
    rej(403),
  );
  await t.rejects(
    i.handleWebhook!({
      method: 'POST',
      headers: {},
      rawBody: Buffer.alloc(0),
      body: undefined,
      query: {},
      ip: '203.0.113.5',
    }),
    rej(400),
  );
});
