/**
 * What a failed send means for the core, said in the target's language (the `errors` section of
 * the locale files; `OutboundMessage.locale` tells which). A refused CONNECT arrives from MQTT.js
 * as an error whose `code` is the CONNACK code (MQTT 3.1.1, or the MQTT 5 reason code).
 */

import type { Locale } from '@herald/plugin-api';
import {
  AuthFailedError,
  errorCode,
  OUTBOUND_REFUSED,
  PermanentSendError,
  RetryableSendError,
} from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };

export type Reason = keyof typeof enLocale.errors;
const TEXTS: Record<Locale, Record<Reason, string>> = { en: enLocale.errors, ru: ruLocale.errors };

/** One explanation in `locale` (English when unknown), `{name}` placeholders filled from `params`. */
export function explain(locale: string, reason: Reason, params: Record<string, string | number>): string {
  const texts = TEXTS[locale as Locale] ?? TEXTS.en;
  return texts[reason].replace(/\{(\w+)\}/g, (m, k: string) => (k in params ? String(params[k]) : m));
}

const CREDENTIALS = new Set([4, 134, 140]);
const NOT_AUTHORIZED = new Set([5, 135, 138]);
const CLIENT_ID = new Set([2, 133]);
const PROTOCOL = new Set([1, 132]);

/** The send error for a failed connect: the login refused, a setting that can never work, or worth a retry. */
export function connectFailure(
  err: unknown,
  o: { broker: string; clientId: string; timeoutMs: number; locale: string },
): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  const code = (e as { code?: unknown }).code;
  const params = { broker: o.broker };
  if (typeof code === 'number') {
    const p = {
      ...params,
      code,
      reason: e.message.replace(/^Connection refused:\s*/i, '') || 'refused',
      client_id: o.clientId,
    };
    if (CREDENTIALS.has(code)) return new AuthFailedError(explain(o.locale, 'credentials_refused', p), { cause: e });
    if (NOT_AUTHORIZED.has(code)) return new AuthFailedError(explain(o.locale, 'not_authorized', p), { cause: e });
    if (CLIENT_ID.has(code)) return new PermanentSendError(explain(o.locale, 'client_id_rejected', p), 0, { cause: e });
    if (PROTOCOL.has(code)) return new PermanentSendError(explain(o.locale, 'protocol_refused', p), 0, { cause: e });
    return new RetryableSendError(explain(o.locale, 'broker_unavailable', p), 0, { cause: e });
  }
  if (errorCode(e) === OUTBOUND_REFUSED)
    return new PermanentSendError(explain(o.locale, 'address_refused', { ...params, error: e.message }), 0, {
      cause: e,
    });
  if ((e as { timedOut?: boolean }).timedOut)
    return new RetryableSendError(
      explain(o.locale, 'timeout', { ...params, seconds: Math.round(o.timeoutMs / 1000) }),
      0,
      { cause: e },
    );
  return new RetryableSendError(
    explain(o.locale, 'unreachable', { ...params, error: e.message.replace(/\.$/, '') }),
    0,
    { cause: e },
  );
}
