/**
 * Why a connection to the broker failed, said in words a user can act on, in English and
 * Russian (the `errors` section of the locale files). MQTT 3.1.1 refuses a CONNECT with a CONNACK
 * return code (MQTT 5 with a reason code); MQTT.js reports it as an error whose `code` is that
 * number. Everything else is the socket's, the TLS layer's or `resolveAllowed`'s error.
 */
import { errorCode, OUTBOUND_REFUSED } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };

export type Reason = keyof typeof enLocale.errors;
export type Texts = { en: string; ru: string };

const TEXTS: Record<'en' | 'ru', Record<Reason, string>> = { en: enLocale.errors, ru: ruLocale.errors };

/** One explanation in both languages, `{name}` placeholders filled from `params`. */
export function explain(reason: Reason, params: Record<string, string | number>): Texts {
  const fill = (s: string) => s.replace(/\{(\w+)\}/g, (m, k: string) => (k in params ? String(params[k]) : m));
  return { en: fill(TEXTS.en[reason]), ru: fill(TEXTS.ru[reason]) };
}

/**
 * The text a provider's status shows. The core stores a provider's status detail as one string and
 * tells the plugin nothing of its owner's language, so both languages go in it, English first.
 */
export const bilingual = (t: Texts): string => `${t.en} / ${t.ru}`;

/** What to do about a failed connection: stop until the config changes, or try again. */
export type FailureKind = 'auth' | 'config' | 'retry';

export interface ConnectFailure {
  kind: FailureKind;
  reason: Reason;
  texts: Texts;
}

/** CONNACK codes (3.1.1 and 5) that mean the credential was refused. */
const CREDENTIALS = new Set([4, 134, 140]);
/** CONNACK codes that mean this user (or client) may not connect. */
const NOT_AUTHORIZED = new Set([5, 135, 138]);
const CLIENT_ID = new Set([2, 133]);
const PROTOCOL = new Set([1, 132]);

/** MQTT.js's words for a CONNACK code, without its "Connection refused: " prefix. */
function connackWords(err: Error): string {
  return err.message.replace(/^Connection refused:\s*/i, '') || 'refused';
}

/** Classifies an error from opening a session. `err.timedOut` marks our own connect timeout. */
export function classifyConnectError(
  err: unknown,
  o: { broker: string; clientId: string; timeoutMs: number },
): ConnectFailure {
  const e = err instanceof Error ? err : new Error(String(err));
  const code = (e as { code?: unknown }).code;
  const base = { broker: o.broker };
  if (typeof code === 'number') {
    const params = { ...base, code, reason: connackWords(e), client_id: o.clientId };
    if (CREDENTIALS.has(code))
      return { kind: 'auth', reason: 'credentials_refused', texts: explain('credentials_refused', params) };
    if (NOT_AUTHORIZED.has(code))
      return { kind: 'auth', reason: 'not_authorized', texts: explain('not_authorized', params) };
    if (CLIENT_ID.has(code))
      return { kind: 'config', reason: 'client_id_rejected', texts: explain('client_id_rejected', params) };
    if (PROTOCOL.has(code))
      return { kind: 'config', reason: 'protocol_refused', texts: explain('protocol_refused', params) };
    return { kind: 'retry', reason: 'broker_unavailable', texts: explain('broker_unavailable', params) };
  }
  if (errorCode(e) === OUTBOUND_REFUSED)
    return {
      kind: 'config',
      reason: 'address_refused',
      texts: explain('address_refused', { ...base, error: e.message }),
    };
  if ((e as { timedOut?: boolean }).timedOut)
    return {
      kind: 'retry',
      reason: 'timeout',
      texts: explain('timeout', { ...base, seconds: Math.round(o.timeoutMs / 1000) }),
    };
  return {
    kind: 'retry',
    reason: 'unreachable',
    texts: explain('unreachable', { ...base, error: e.message.replace(/\.$/, '') }),
  };
}
