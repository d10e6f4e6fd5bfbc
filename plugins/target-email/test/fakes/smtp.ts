/**
 * A real SMTP server on 127.0.0.1 for the email target's tests, built on the `smtp-server`
 * package: STARTTLS or implicit TLS with a throwaway self-signed certificate, AUTH PLAIN/LOGIN,
 * recipient rejection with real reply codes, and every accepted message kept as raw bytes.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { SMTPServer } from 'smtp-server';

export interface Received {
  from: string;
  to: string[];
  raw: string;
  /** TLS was in place when the message was sent (STARTTLS or implicit). */
  secure: boolean;
  user?: string;
  servername?: string;
}

export interface FakeSmtpOptions {
  /** Implicit TLS from the first byte (port 465 style). */
  secure?: boolean;
  /** Accounts accepted by AUTH; without any, AUTH is not offered and not required. */
  users?: Record<string, string>;
  /** Recipients answered with `550 5.1.1 Mailbox unavailable`. */
  rejectRecipients?: string[];
  /** Answer every MAIL FROM with 451 (a transient failure). */
  tempFail?: boolean;
  /** Do not offer STARTTLS (a plain-only server). */
  noStartTls?: boolean;
}

/** Creates a self-signed certificate for `cn` with openssl; returns PEM strings. */
export function selfSignedCert(cn = 'mail.test'): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'herald-smtp-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-subj',
        `/CN=${cn}`,
        '-days',
        '1',
        '-addext',
        `subjectAltName=DNS:${cn}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export class FakeSmtp {
  readonly received: Received[] = [];
  /** Server names clients asked for in TLS (SNI). */
  readonly servernames: string[] = [];
  readonly authAttempts: { method: string; username: string; ok: boolean }[] = [];
  /** TCP connections accepted (a pooled client reuses one). */
  connections = 0;
  port = 0;
  private readonly server: SMTPServer;

  constructor(opts: FakeSmtpOptions = {}, pem = selfSignedCert()) {
    const users = opts.users ?? {};
    const context = tls.createSecureContext(pem);
    this.server = new SMTPServer({
      secure: opts.secure ?? false,
      ...pem,
      logger: false,
      disableReverseLookup: true,
      // Connections a client left open are cut after this, so close() never stalls a test.
      closeTimeout: 500,
      onConnect: (_session, cb) => {
        this.connections++;
        cb();
      },
      authMethods: ['PLAIN', 'LOGIN'],
      authOptional: Object.keys(users).length === 0,
      disabledCommands: [...(Object.keys(users).length ? [] : ['AUTH']), ...(opts.noStartTls ? ['STARTTLS'] : [])],
      SNICallback: (name, cb) => {
        this.servernames.push(name);
        cb(null, context);
      },
      onAuth: (auth, _session, cb) => {
        const ok = auth.username !== undefined && users[auth.username] === auth.password;
        this.authAttempts.push({ method: auth.method, username: auth.username ?? '', ok });
        if (!ok) return cb(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }));
        cb(null, { user: auth.username });
      },
      onMailFrom: (_address, _session, cb) => {
        if (opts.tempFail) return cb(Object.assign(new Error('Greylisted, try again later'), { responseCode: 451 }));
        cb();
      },
      onRcptTo: (address, _session, cb) => {
        if (opts.rejectRecipients?.includes(address.address)) {
          return cb(Object.assign(new Error('5.1.1 Mailbox unavailable'), { responseCode: 550 }));
        }
        cb();
      },
      onData: (stream, session, cb) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          this.received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
            secure: session.secure,
            user: session.user as string | undefined,
            servername: session.servername || undefined,
          });
          cb();
        });
      },
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
