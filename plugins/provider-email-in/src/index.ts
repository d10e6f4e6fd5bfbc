/**
 * Email provider (`email_in`): devices that can only send email (a NAS, a router, a UPS card, a
 * printer, a cron job with `mail`) notify Herald by mail. The core's SMTP listener
 * (`SERVICE_SMTP_PORT`) takes a message for `<webhook_token>@<any domain>` and hands it here; the
 * subject becomes the title, the text (or the HTML as text) the body. The same message may also be
 * POSTed to the provider's webhook URL as raw RFC 5322 (`Content-Type: message/rfc822`).
 *
 * The core does the SMTP side (AUTH, STARTTLS, the size and rate limits, the 250 only once the event
 * is durable); this plugin decides who may send (`require_auth`, `allowed_senders`) and reads the
 * message. Attachments are listed by name and never kept.
 */
import crypto from 'node:crypto';
import type {
  ConnectionEnv,
  EmittedEvent,
  InboundMail,
  InboundWebhook,
  MailEnvelope,
  ProviderContext,
  WebhookConnection,
  WebhookResult,
} from '@herald/plugin-api';
import { defineProvider, WebhookRejectedError } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import type { EmailInConfig } from './config.ts';
import { ConfigSchema } from './config.ts';
import { events } from './events.ts';
import { parseEmail } from './parse.ts';
import { senderAllowed } from './senders.ts';
import { severityRule } from './severity.ts';
import { templates } from './templates.ts';

/** How long a message is remembered, so that one the sender retries (after a 451, a lost reply) is recorded once. */
export const REPLAY_TTL_SECONDS = 5 * 86_400;

/** The provider's token, the last segment of its webhook URL (masked wherever a message quotes it). */
function tokenOf(webhookUrl: string | undefined): string | undefined {
  const last = webhookUrl?.split('/').pop();
  return last ? decodeURIComponent(last) : undefined;
}

/** A host name a mail address can carry after the @ (letters and a dot; no IP literal). */
const DOMAIN = /^(?=.*[a-z])[a-z0-9-]+(\.[a-z0-9-]+)+$/i;

/** The sample message of the example commands, lines ending in CRLF as SMTP wants them. */
const SAMPLE = 'Subject: Backup done\\r\\n\\r\\nAll files copied.\\r\\n';

/**
 * What the provider's page shows: with the SMTP listener on, its host and port, the address to
 * send to (`<token>@` the public host name, else `herald.local`: the domain is not looked at) and
 * the password for SMTP AUTH, with a `curl` that mails a test; with it off, a `curl` that POSTs
 * the message to the webhook URL.
 */
export function connection(publicUrl: string, token: string, env?: ConnectionEnv): WebhookConnection {
  const hook = env?.webhookUrl ?? `${publicUrl}/api/hooks/${token}`;
  if (!env?.smtp) {
    return {
      fields: [],
      example:
        `printf 'From: nas@example.org\\r\\n${SAMPLE}' | curl -sS -H 'Content-Type: message/rfc822' --data-binary ` +
        `@- '${hook}'`,
    };
  }
  const { host, port } = env.smtp;
  const domain = [new URL(publicUrl).hostname, host].find((h) => DOMAIN.test(h)) ?? 'herald.local';
  const recipient = `${token}@${domain}`;
  const server = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    fields: [
      { key: 'smtp_host', value: host },
      { key: 'smtp_port', value: String(port) },
      { key: 'recipient', value: recipient, secret: true },
      { key: 'smtp_password', value: token, secret: true },
    ],
    example:
      `printf '${SAMPLE}' | curl -sS smtp://${server}:${port} --mail-from nas@example.org --mail-rcpt ` +
      `'${recipient}' -T -`,
  };
}

/** The local part of an address. */
const localPart = (address: string) => address.slice(0, Math.max(0, address.lastIndexOf('@'))) || address;

export function createEmailIn(ctx: ProviderContext<EmailInConfig, unknown>) {
  const cfg = ctx.config;
  const severity = severityRule(cfg.critical_keywords, cfg.warning_keywords);
  const token = tokenOf(ctx.webhookUrl);

  /** The event for one message, and the replay key that makes a retried copy count once. */
  async function receive(
    raw: Buffer,
    o: { ip: string; envelopeFrom: string; secret?: string },
  ): Promise<WebhookResult> {
    const replayKey = {
      key: `mail:${crypto.createHash('sha256').update(raw).digest('hex')}`,
      ttlSeconds: REPLAY_TTL_SECONDS,
    };
    // Already recorded: the core answers 250 (or 200) without recording it again.
    if (await ctx.store.get(replayKey.key))
      return { events: [], status: 200, body: { detail: 'This message was received before.' } };
    const mail = await parseEmail(raw, o.secret);
    const payload: Record<string, unknown> = {
      title: mail.title,
      body: mail.body,
      from: mail.from || o.envelopeFrom,
      to: mail.to,
      attachments: mail.attachments,
      source_ip: o.ip,
    };
    if (mail.fromName) payload.from_name = mail.fromName;
    if (mail.messageId) payload.message_id = mail.messageId;
    const event: EmittedEvent = { type: 'email_received', payload, severity: severity(mail.title) };
    return { events: [event], replayKey };
  }

  return {
    verifyMail(env: MailEnvelope): void {
      if (cfg.require_auth && !env.authenticated) {
        throw new WebhookRejectedError(
          401,
          "Authentication required: log in (AUTH PLAIN or LOGIN) with this mailbox's token as the password",
        );
      }
      if (!senderAllowed(cfg.allowed_senders, env.from)) {
        throw new WebhookRejectedError(403, `Sender <${env.from}> is not allowed to send to this mailbox`);
      }
    },
    async handleMail(mail: InboundMail): Promise<WebhookResult> {
      return receive(mail.raw, { ip: mail.ip, envelopeFrom: mail.from, secret: localPart(mail.recipient) });
    },
    /**
     * The raw message POSTed to the webhook URL: the token in the URL stands for AUTH; the From header is the sender
     * checked.
     */
    async handleWebhook(req: InboundWebhook): Promise<WebhookResult> {
      if (!req.rawBody.length)
        throw new WebhookRejectedError(
          400,
          'the body must be an email message (RFC 5322, Content-Type: message/rfc822)',
        );
      if (cfg.allowed_senders.length) {
        const { from } = await parseEmail(req.rawBody, token);
        if (!senderAllowed(cfg.allowed_senders, from))
          throw new WebhookRejectedError(403, `sender <${from}> is not allowed for this provider`);
      }
      return receive(req.rawBody, { ip: req.ip, envelopeFrom: '', secret: token });
    },
  };
}

export default defineProvider({
  manifest: {
    id: 'email_in',
    kind: 'provider',
    apiVersion: 1,
    displayName: 'Email (SMTP)',
    locales: { en: enLocale, ru: ruLocale },
    description:
      'Receives email from devices that can only send mail (a NAS, a router, a printer) and turns each message ' +
      'into a notification.',
    configSchema: ConfigSchema,
    // `webhook`: the provider gets a token, shown as its webhook URL, and the address <token>@<any domain>.
    ingest: 'webhook',
    webhook: { rateLimitPerMinute: 60, maxBodyBytes: 1024 * 1024, connection },
    mail: {},
    events,
    templates,
  },
  create: (ctx) => createEmailIn(ctx),
});
