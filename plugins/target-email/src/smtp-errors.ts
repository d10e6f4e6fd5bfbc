/**
 * Maps nodemailer and outbound-policy failures to the plugin contract's errors.
 * SMTP says it all in the reply class: 5yz is a permanent refusal, 4yz a transient one (RFC 5321).
 */
import {
  AuthFailedError,
  ConfigError,
  NotReadyError,
  OUTBOUND_REFUSED,
  PermanentSendError,
  PluginError,
  RetryableSendError,
} from '@herald/plugin-api';

interface SmtpFailure {
  code?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  permanent?: boolean;
  message?: string;
}

/** Reply codes that mean the login was refused or is required (RFC 4954). */
const AUTH_CODES = new Set([530, 534, 535, 538]);

/** A readable, secret-free description: the SMTP reply and the command it answered. */
export function describe(err: SmtpFailure, password?: string): string {
  let text = err.message ?? String(err);
  if (err.command && !text.includes(err.command)) text += ` (after ${err.command})`;
  // Servers do not echo credentials, but a misbehaving one could; never let the password through.
  return password ? text.split(password).join('***') : text;
}

/** Error for a failed send. */
export function toSendError(raw: unknown, password?: string): Error {
  if (raw instanceof PluginError) return raw;
  const err = (raw ?? {}) as SmtpFailure;
  const what = `smtp: ${describe(err, password)}`;
  const code = err.responseCode;
  if (err.code === 'EAUTH' || err.code === 'ENOAUTH' || (code !== undefined && AUTH_CODES.has(code)))
    return new AuthFailedError(what);
  if (err.code === OUTBOUND_REFUSED) return new PermanentSendError(what, 0);
  // nodemailer marks 503 (bad sequence) as not permanent: a new connection can fix it.
  if (code !== undefined && code >= 500 && err.permanent !== false) return new PermanentSendError(what, code);
  return new RetryableSendError(what, 0);
}

/** Error for a failed `start()` check: the instance is retried later unless it can never work. */
export function toStartError(raw: unknown, password?: string): Error {
  const mapped = toSendError(raw, password);
  if (mapped instanceof AuthFailedError) return mapped;
  if ((raw as SmtpFailure)?.code === OUTBOUND_REFUSED) return new ConfigError(mapped.message);
  return new NotReadyError(mapped.message);
}
