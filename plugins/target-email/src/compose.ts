/**
 * Turns a rendered notification into a multipart/alternative email: a plain-text part from the
 * plain rendering and an HTML part from the HTML one. The subject is the rendered title, so it is
 * already in the recipient's locale.
 */
import type { OutboundMessage } from '@herald/plugin-api';
import type { EmailTargetConfig } from './config.ts';

/** The message fields nodemailer's sendMail takes that this plugin sets. */
export interface ComposedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  messageId: string;
  priority: 'high' | 'normal';
  headers: Record<string, string>;
  /** A reply in the thread of an earlier notification (RFC 5322 In-Reply-To / References). */
  inReplyTo?: string;
  references?: string[];
}

/** A Message-ID as RFC 5322 writes it (`<left@right>`), or undefined for anything else. */
export function messageIdOf(v: unknown): string | undefined {
  return typeof v === 'string' && /^<[^<>\s@]+@[^<>\s@]+>$/.test(v) ? v : undefined;
}

/**
 * The mail for a later event about the same thing: in reply to the first notification, so mail
 * clients file it in the same conversation. `threadRoot` is that mail's Message-ID.
 */
export function composeReply(
  cfg: Pick<EmailTargetConfig, 'from' | 'to' | 'subject_prefix'>,
  message: OutboundMessage,
  threadRoot: string,
): ComposedMail {
  return { ...composeMail(cfg, message), inReplyTo: threadRoot, references: [threadRoot] };
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
/** Header values are single lines: a line break in a title must not start a new header. */
const oneLine = (s: string) =>
  s
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
const MAX_SUBJECT = 200;

export function subjectOf(
  cfg: Pick<EmailTargetConfig, 'subject_prefix'>,
  message: Pick<OutboundMessage, 'plainTitle' | 'plainBody'>,
): string {
  // Without a title, the first line of the body says what the mail is about.
  const title = oneLine(message.plainTitle) || oneLine(message.plainBody.split('\n').find((l) => l.trim()) ?? '');
  const subject = [oneLine(cfg.subject_prefix ?? ''), title].filter(Boolean).join(' ');
  return subject.length > MAX_SUBJECT ? `${subject.slice(0, MAX_SUBJECT - 1)}…` : subject || 'Herald notification';
}

/** The domain of the sender address, for a Message-ID that belongs to it. */
function senderDomain(from: string): string {
  const m = /@([A-Za-z0-9.-]+)>?\s*$/.exec(from.trim());
  return m ? m[1] : 'herald.invalid';
}

export function composeMail(
  cfg: Pick<EmailTargetConfig, 'from' | 'to' | 'subject_prefix'>,
  message: OutboundMessage,
): ComposedMail {
  const asHtml = (s: string) => (message.format === 'html' ? s : escapeHtml(s));
  const url = message.url && !message.plainBody.includes(message.url) ? message.url : undefined;

  const text = [message.plainTitle.trim(), message.plainBody.trim(), url].filter(Boolean).join('\n\n') + '\n';
  const lang = escapeHtml(message.locale);
  const html = [
    '<!DOCTYPE html>',
    `<html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"></head>`,
    '<body style="font-family: sans-serif; line-height: 1.4;">',
    message.title.trim() ? `<h2 style="margin: 0 0 12px;">${asHtml(message.title.trim())}</h2>` : '',
    // Bodies carry their line breaks as newlines, which HTML would otherwise fold away.
    `<div style="white-space: pre-wrap;">${asHtml(message.body.trim())}</div>`,
    url ? `<p><a href="${escapeHtml(url)}">${escapeHtml(url)}</a></p>` : '',
    '</body></html>',
  ]
    .filter(Boolean)
    .join('\n');

  const id = message.deliveryId.replace(/[^A-Za-z0-9.-]/g, '') || 'delivery';
  return {
    from: cfg.from,
    to: [...cfg.to],
    subject: subjectOf(cfg, message),
    text,
    html,
    // Stable across retries of one delivery, so a receiving system can tell a resend from a new mail.
    messageId: `<${id}.herald@${senderDomain(cfg.from)}>`,
    priority: message.severity === 'critical' ? 'high' : 'normal',
    headers: {
      // RFC 3834: an automatic message; vacation responders should not answer it.
      'Auto-Submitted': 'auto-generated',
      'Content-Language': message.locale,
      'X-Herald-Event-Type': oneLine(message.eventType),
      'X-Herald-Severity': message.severity,
    },
  };
}
