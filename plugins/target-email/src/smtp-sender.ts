/**
 * One pooled SMTP transport per target instance, connected to an address the outbound policy
 * allowed. The host name is resolved through `ctx.http.resolveAllowed` before every send; when the
 * answer changes, the pool is replaced, so a DNS change can neither smuggle the connection to a
 * refused address nor leave the target stuck on an old one.
 */
import net from 'node:net';
import type { OutboundHttp, PluginLogger } from '@herald/plugin-api';
import type nodemailer from 'nodemailer';
import type { ComposedMail } from './compose.ts';
import type { EmailTargetConfig } from './config.ts';
import { effectivePort } from './config.ts';

type Transport = ReturnType<typeof nodemailer.createTransport>;

export interface SentInfo {
  messageId?: string;
  accepted: string[];
  rejected: string[];
  response?: string;
}

/** Limits so a silent server cannot hold a delivery for nodemailer's default of minutes. */
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000, dnsTimeout: 5_000 };

export class SmtpSender {
  private current?: { address: string; transport: Transport };
  private readonly cfg: EmailTargetConfig;
  private readonly http: OutboundHttp;
  private readonly log: PluginLogger;

  constructor(cfg: EmailTargetConfig, http: OutboundHttp, log: PluginLogger) {
    this.cfg = cfg;
    this.http = http;
    this.log = log;
  }

  /** The pooled transport for the host's current (allowed) address. */
  async transport(): Promise<Transport> {
    const host = this.cfg.host.replace(/^\[(.*)\]$/, '$1');
    const { address } = await this.http.resolveAllowed(host);
    if (this.current?.address === address) return this.current.transport;
    if (this.current) {
      this.log.info({ host, address }, 'smtp host address changed; reconnecting');
      this.current.transport.close();
    }
    const security = this.cfg.security ?? 'starttls';
    // TLS must check the certificate against the name the operator typed, not the address.
    const servername = net.isIP(host) ? undefined : host;
    // nodemailer is imported on the first send, so a service without email targets never loads it.
    const { default: mailer } = await import('nodemailer');
    const transport = mailer.createTransport({
      pool: true,
      maxConnections: 2,
      host: address,
      port: effectivePort(this.cfg),
      secure: security === 'tls',
      requireTLS: security === 'starttls',
      ignoreTLS: security === 'none',
      servername,
      tls: { servername, rejectUnauthorized: !this.cfg.allow_self_signed, minVersion: 'TLSv1.2' },
      auth: this.cfg.username ? { user: this.cfg.username, pass: this.cfg.password ?? '' } : undefined,
      logger: false,
      ...TIMEOUTS,
    });
    this.current = { address, transport };
    return transport;
  }

  /** Opens a connection and logs in, without sending anything. */
  async verify(): Promise<void> {
    await (await this.transport()).verify();
  }

  async send(mail: ComposedMail, signal: AbortSignal): Promise<SentInfo> {
    const transport = await this.transport();
    signal.throwIfAborted();
    // nodemailer cannot cancel a transaction; on abort the caller stops waiting and the outcome is unknown.
    let onAbort = () => {};
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
    });
    signal.addEventListener('abort', onAbort, { once: true });
    const sending = transport.sendMail(mail);
    let info: Awaited<typeof sending>;
    try {
      info = await Promise.race([sending, aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    const list = (v: unknown) =>
      Array.isArray(v) ? v.map((a) => (typeof a === 'string' ? a : (a as { address: string }).address)) : [];
    return {
      messageId: info.messageId,
      accepted: list(info.accepted),
      rejected: list(info.rejected),
      response: info.response,
    };
  }

  close(): void {
    this.current?.transport.close();
    this.current = undefined;
  }
}
