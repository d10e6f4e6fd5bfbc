/**
 * What the providers API tells a user to paste (`webhook_url`, `webhook_connection`,
 * `webhook_example`, `smtp_listener_off`), checked by doing it: each kind's example command is run
 * as it is shown, with Debian's curl and bash, against a real service on loopback, and must record
 * one event. The email provider shows the SMTP listener's host, port and address while
 * SERVICE_SMTP_PORT is set (its example mails through the listener), and says the listener is off
 * otherwise (its example POSTs the message to the webhook URL). Labels follow the caller's language.
 */

import { execFile } from 'node:child_process';
import t from 'tap';
import { ensureBinary, freePort, peerEnv } from '../helpers/peers.ts';
import { startService, type TestService } from '../helpers/service.ts';
import { eventRows, plugins, until } from './support.ts';

const CURL = ensureBinary('/usr/bin/curl');
const BASH = ensureBinary('/bin/bash');
const KINDS = plugins(
  '@herald/provider-ntfy',
  '@herald/provider-gotify',
  '@herald/provider-apprise-api',
  '@herald/provider-email-in',
  '@herald/provider-alertmanager',
);

/** Runs one shown command line in bash (curl found on PATH), without blocking the service in this process. */
function shell(line: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      BASH,
      ['-c', line],
      { env: peerEnv({ PATH: `${CURL.slice(0, CURL.lastIndexOf('/'))}:/bin` }), timeout: 20_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, out: `${stdout}${stderr}` });
      },
    );
  });
}

const create = async (s: TestService, kind: string, token = s.admin.token) => {
  const r = await s.request('POST', '/api/providers', { token, body: { kind, name: `My ${kind}`, config: {} } });
  if (r.status !== 201) throw new Error(`${kind}: ${r.status} ${r.text}`);
  return r.body;
};

const tokenOf = (p: { webhook_url: string }) => p.webhook_url.split('/').pop()!.split('?token=').pop()!;

t.test('with the SMTP listener on', async (t) => {
  const port = await freePort();
  const s = await startService({
    SERVICE_PLUGINS: KINDS,
    SERVICE_SMTP_PORT: String(port),
    SERVICE_LOG_LEVEL: 'WARNING',
  });
  t.teardown(() => s.stop());

  await t.test('each example command records an event as it is shown', async (t) => {
    for (const kind of ['ntfy', 'gotify', 'apprise_api', 'email_in']) {
      const p = await create(s, kind);
      t.type(p.webhook_example, 'string', `${kind}: an example`);
      t.ok(
        p.webhook_example.includes(s.url.replace('http://', '')) ||
          p.webhook_example.includes(`smtp://127.0.0.1:${port}`),
        `${kind}: at this service`,
      );
      const run = await shell(p.webhook_example);
      t.equal(run.code, 0, `${kind}: the command succeeds (${run.out.slice(0, 300)})`);
      const rows = await until(`${kind}'s event`, async () => {
        const r = await eventRows(s, p.id);
        return r.length ? r : null;
      });
      t.equal(rows.length, 1, `${kind}: one event`);
      t.match(JSON.stringify(rows[0]!.payload), /Backup done/, `${kind}: with the sample text`);
      t.equal(p.smtp_listener_off, false);
    }
  });

  await t.test('the email provider lists the listener, the address and the password', async (t) => {
    const p = await create(s, 'email_in');
    const token = tokenOf(p);
    t.same(p.webhook_connection, [
      {
        key: 'smtp_host',
        label: 'SMTP server',
        hint: "Where the device's email settings ask for the mail (SMTP) server.",
        value: '127.0.0.1',
        secret: false,
      },
      {
        key: 'smtp_port',
        label: 'SMTP port',
        hint: 'No encryption (or STARTTLS when the service has a certificate).',
        value: String(port),
        secret: false,
      },
      {
        key: 'recipient',
        label: 'Send to',
        hint: 'The recipient address; whoever knows it can send notifications, so keep it secret.',
        value: `${token}@herald.local`,
        secret: true,
      },
      {
        key: 'smtp_password',
        label: 'SMTP password',
        hint: 'Only if the device logs in (SMTP AUTH): any user name, this password.',
        value: token,
        secret: true,
      },
    ]);
    t.equal(p.webhook_url, `${s.url}/api/hooks/${token}`, 'the webhook URL stays');
    const dana = await s.user('dana@example.test');
    t.equal((await s.request('PATCH', '/api/v1/users/me', { token: dana.token, body: { locale: 'ru' } })).status, 200);
    const ru = await create(s, 'email_in', dana.token);
    t.same(
      ru.webhook_connection.map((f: { label: string }) => f.label),
      ['SMTP-сервер', 'SMTP-порт', 'Адрес получателя', 'Пароль SMTP'],
      "labels in the user's language",
    );
  });

  await t.test('a kind without a connection hook has no example and no fields', async (t) => {
    const p = await s.request('POST', '/api/providers', {
      token: s.admin.token,
      body: { kind: 'alertmanager', name: 'AM', config: { auth: 'none' } },
    });
    t.equal(p.status, 201, p.text);
    t.equal(p.body.webhook_connection, null);
    t.equal(p.body.webhook_example, null);
    t.equal(p.body.smtp_listener_off, false);
  });
});

t.test('with the SMTP listener off', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: KINDS, SERVICE_LOG_LEVEL: 'WARNING' });
  t.teardown(() => s.stop());
  const p = await create(s, 'email_in');
  t.equal(p.smtp_listener_off, true, 'the page can say mail cannot arrive yet');
  t.same(p.webhook_connection, [], 'no SMTP values to paste');
  t.equal((await create(s, 'ntfy')).smtp_listener_off, false, 'only kinds that take mail wait for the listener');
  const run = await shell(p.webhook_example);
  t.equal(run.code, 0, run.out.slice(0, 300));
  const rows = await until('the posted message', async () => {
    const r = await eventRows(s, p.id);
    return r.length ? r : null;
  });
  t.match(rows[0]!.payload, { title: 'Backup done', body: 'All files copied.', from: 'nas@example.org' });
});
