/**
 * The English texts the dispatcher and the plugins write for a failed delivery, a dropped event or
 * a rejected webhook call, said in the interface language; the original stays in the element's
 * tooltip and in the raw JSON of the details view.
 */
import { locale, t } from '../lib/i18n.ts';
import { eventLabel } from './labels.ts';

const CYRILLIC = /[а-яё]/i;

/** The part of an English failure text that can be said in the interface language (null: none). */
function failure(raw: string, status: number | null): string | null {
  const answered = /^(.*?)\s*answered (\d{3})\b/i.exec(raw);
  const code = answered ? Number(answered[2]) : status;
  const service = answered?.[1] && /^[A-Z]/.test(answered[1]) ? answered[1] : '';
  if (code)
    return service ? t('failures.answered_by', { service, status: code }) : t('failures.answered', { status: code });
  if (/ECONNREFUSED|connection refused/i.test(raw)) return t('failures.refused');
  if (/ENOTFOUND|EAI_AGAIN|getaddrinfo/i.test(raw)) return t('failures.dns');
  if (/timed? ?out|ETIMEDOUT|timeout/i.test(raw)) return t('failures.timeout');
  if (/certificate|\bTLS\b|\bSSL\b/i.test(raw)) return t('failures.tls');
  if (/fetch failed|socket|ECONNRESET|network/i.test(raw)) return t('failures.network');
  if (/dropped by hand while deferred/i.test(raw)) return t('failures.dropped_by_hand');
  if (/not allowed|outbound|private address|blocked/i.test(raw)) return t('failures.blocked');
  return null;
}

/**
 * A delivery's or target's last error in the interface language. English texts are shown as
 * they are in English; in another language the known shapes are translated and the rest
 * summarized (the original goes in the element's tooltip: `title={raw}`).
 */
export function failureText(
  raw: string,
  status: number | null = null,
  of: 'delivery' | 'problem' = 'delivery',
): string {
  if (locale() === 'en' || CYRILLIC.test(raw)) return raw;
  const gaveUp = /^gave up after (\d+) attempts?:\s*(.*)$/is.exec(raw);
  if (gaveUp) {
    const rest = failure(gaveUp[2], status) ?? unknown(of);
    return t('failures.gave_up', { count: Number(gaveUp[1]), reason: rest });
  }
  return failure(raw, status) ?? unknown(of);
}

const unknown = (of: 'delivery' | 'problem'): string =>
  of === 'problem' ? t('failures.problem') : t('failures.other');

/** A source's, tracker's or bot's last problem (a poll or connection error, a status detail), likewise. */
export const problemText = (raw: string): string => failureText(raw, null, 'problem');

/** Why an event went nowhere (the `reason` of its details), in the interface language. */
export function reasonText(raw: string): string {
  if (locale() === 'en' || CYRILLIC.test(raw)) return raw;
  if (/^no enabled tracker is linked/i.test(raw)) return t('reasons.no_target');
  const off = /^event type (\S+) is disabled on this tracker$/i.exec(raw);
  if (off) return t('reasons.type_off', { type: eventLabel(off[1]) });
  const stale = /^quiet hours \((\d\d:\d\d)-(\d\d:\d\d) ([^)]+)\): (\S+) is dropped/i.exec(raw);
  if (stale) return t('reasons.quiet_drop', { start: stale[1], end: stale[2], type: eventLabel(stale[4]) });
  return failureText(raw);
}

/** Why a webhook call was turned away (the webhook log), in the interface language. */
export function rejectionText(raw: string, status: number): string {
  if (locale() === 'en' || CYRILLIC.test(raw)) return raw;
  if (/missing bearer token/i.test(raw)) return t('rejections.no_token');
  if (/bearer token|invalid token|wrong token|token does not match/i.test(raw)) return t('rejections.bad_token');
  if (/signature/i.test(raw)) return t('rejections.bad_signature');
  if (/basic/i.test(raw)) return t('rejections.bad_basic');
  if (/too large|payload size/i.test(raw)) return t('rejections.too_large');
  if (/rate|too many/i.test(raw)) return t('rejections.rate');
  if (/json|parse|content.type/i.test(raw)) return t('rejections.bad_body');
  if (status === 401 || status === 403) return t('rejections.bad_token');
  return t('rejections.other', { status });
}
