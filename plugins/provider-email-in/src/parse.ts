/**
 * Reads one RFC 5322 message into what the notification shows: the subject, the text (or the HTML
 * as text), the sender, the recipients and the attachments' names. mailparser is loaded on the
 * first message, not when the plugin loads.
 */
import { WebhookRejectedError } from '@herald/plugin-api';

/** Longest title kept, in characters; a longer subject is cut and ends with `…`. */
export const MAX_TITLE = 250;
/** Longest body kept, in characters (targets cut further to their own limits). */
export const MAX_BODY = 4000;
/** Attachment names listed at most. */
export const MAX_ATTACHMENTS = 50;
const MAX_NAME = 200;
const MAX_ADDRESSES = 50;
/** HTML longer than this is not converted to text (mailparser's own guard against slow conversions). */
const MAX_HTML = 1024 * 1024;
const MASK = '********';

export interface ParsedEmail {
  title: string;
  body: string;
  /** The From header's address, lower-cased; '' when the header has none. */
  from: string;
  fromName?: string;
  to: string[];
  attachments: string[];
  messageId?: string;
}

type SimpleParser = typeof import('mailparser')['simpleParser'];
let loading: Promise<SimpleParser> | undefined;
/** mailparser, imported once, on the first message. */
const parser = (): Promise<SimpleParser> => (loading ??= import('mailparser').then((m) => m.simpleParser));

/** Cuts `s` to `max` characters (not inside a surrogate pair), ending a cut text with `…`. */
export function bounded(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = max - 1;
  const code = s.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${s.slice(0, end).trimEnd()}…`;
}

/** The body as shown: line breaks unified, trailing spaces and runs of blank lines gone, trimmed. */
export function cleanBody(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Every occurrence of `secret` (any case) replaced by the mask. */
export function maskSecret(text: string, secret: string | undefined): string {
  if (!secret) return text;
  const lower = text.toLowerCase();
  const s = secret.toLowerCase();
  let out = '';
  let from = 0;
  for (let i = lower.indexOf(s); i >= 0; i = lower.indexOf(s, from)) {
    out += text.slice(from, i) + MASK;
    from = i + s.length;
  }
  return out + text.slice(from);
}

interface AddressLike {
  address?: string;
  name?: string;
  group?: AddressLike[];
}
interface AddressObjectLike {
  value: AddressLike[];
}

/** The addresses of one or more address headers, groups flattened. */
function addresses(h: AddressObjectLike | AddressObjectLike[] | undefined): AddressLike[] {
  const out: AddressLike[] = [];
  const walk = (list: AddressLike[]) => {
    for (const a of list) {
      if (a.group) walk(a.group);
      else if (a.address) out.push(a);
    }
  };
  for (const o of Array.isArray(h) ? h : h ? [h] : []) walk(o.value);
  return out;
}

/**
 * Parses `raw`. `secret` (the provider's token, the local part of its address) is masked wherever
 * it shows in what is kept, so that a device quoting its recipient does not leak it to a chat.
 */
export async function parseEmail(raw: Buffer, secret?: string): Promise<ParsedEmail> {
  const simpleParser = await parser();
  let mail: Awaited<ReturnType<SimpleParser>>;
  try {
    mail = await simpleParser(raw, {
      skipTextToHtml: true,
      skipImageLinks: true,
      keepCidLinks: true,
      maxHtmlLengthToParse: MAX_HTML,
    });
  } catch (err) {
    throw new WebhookRejectedError(422, `the message could not be read as an email: ${(err as Error).message}`);
  }
  const hide = (s: string) => maskSecret(s, secret);
  const subject = (mail.subject ?? '').replace(/\s+/g, ' ').trim();
  // mailparser fills `text` from the HTML part when the message has no text part.
  const text = mail.text ?? (typeof mail.html === 'string' ? mail.html.replace(/<[^>]*>/g, ' ') : '');
  const sender = addresses(mail.from)[0];
  const to = [...addresses(mail.to), ...addresses(mail.cc)]
    .slice(0, MAX_ADDRESSES)
    .map((a) => hide(a.address!.toLowerCase()));
  const attachments = mail.attachments
    // Images shown inside an HTML body (multipart/related) are part of the text, not attachments.
    .filter((a) => !a.related)
    .slice(0, MAX_ATTACHMENTS)
    .map((a) => bounded(hide(a.filename?.trim() || `unnamed (${a.contentType})`), MAX_NAME));
  const parsed: ParsedEmail = {
    title: bounded(hide(subject), MAX_TITLE),
    body: bounded(hide(cleanBody(text)), MAX_BODY),
    from: hide((sender?.address ?? '').toLowerCase()),
    to,
    attachments,
  };
  const name = sender?.name?.replace(/\s+/g, ' ').trim();
  if (name) parsed.fromName = bounded(hide(name), MAX_NAME);
  if (mail.messageId) parsed.messageId = bounded(hide(mail.messageId), MAX_NAME);
  return parsed;
}
