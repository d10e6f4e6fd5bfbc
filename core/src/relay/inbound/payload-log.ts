/**
 * webhook_payload_log: one row per request on an inbound webhook route, a provider's
 * (`/api/hooks/{token}`) or a messaging bot's (`/api/bots/{webhook_path_id}/webhook`), with its
 * status, why it was refused and a redacted excerpt of its body.
 */
import type { Core } from '../../core.ts';
import { Database as Db, type Queryable } from '../../db/database.ts';
import { newId } from '../../http/ids.ts';
import { redactedJson, redactText, SEALED_MARK, SENSITIVE_KEY } from '../../logging/redact.ts';
import { type Page, pageSql } from '../routes/common.ts';

const EXCERPT = 2048;

/**
 * The redacted start of a request body. The text is cut before it is redacted: the redaction
 * patterns look around every separator, and a whole body of megabytes (unauthenticated, or over
 * the size limit) would stall the event loop. `body` is the parsed body when there is one (its
 * sensitive fields are masked by name); otherwise the raw bytes are excerpted.
 *
 * A parsed body is excerpted from its own text, as sent, when that text cannot hold a field to mask by name: no
 * secret word anywhere in it (SENSITIVE_KEY, also where it is only part of a value), no value sealed at rest, and no
 * `\u` escape (which could spell a secret field's name). Its free text is still redacted. Most webhooks are such
 * bodies, and this spares every one of them a masked copy of the parsed body (issue 27: ~10 → ~5.6 µs an excerpt).
 */
export function payloadExcerpt(raw: Buffer, body?: unknown): string | null {
  if (!raw.length) return null;
  const head = raw.subarray(0, EXCERPT * 2).toString('utf8');
  if (body !== undefined && (SENSITIVE_KEY.test(head) || head.includes(SEALED_MARK) || head.includes('\\u')))
    return redactText(redactedJson(body, EXCERPT * 2)).slice(0, EXCERPT);
  return redactText(head).slice(0, EXCERPT);
}

/** Whose route a request came in on: a provider's or a bot's, and the user who owns it. */
export type PayloadLogOwner =
  | { userId: string; providerId: string; botId?: undefined }
  | { userId: string; botId: string; providerId?: undefined };

export interface PayloadLogEntry {
  status: number;
  error: string | null;
  excerpt: string | null;
  ip: string;
  eventIds?: string[] | null;
}

/** A `webhook_payload_log` row as the log's page reads it (an accepted request's, from its event's row). */
interface LogRow {
  id: string;
  received_at: string;
  status_code: number | string;
  error_message: string | null;
  payload_excerpt: string | null;
  source_ip: string | null;
  /** JSON: the ids of the events the request raised. */
  event_ids: unknown;
}

export async function recordPayload(q: Queryable, at: Date, owner: PayloadLogOwner, e: PayloadLogEntry): Promise<void> {
  await q.run(
    `INSERT INTO webhook_payload_log (id, user_id, provider_id, bot_id, received_at, status_code, error_message,
      payload_excerpt, source_ip, event_ids)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      newId(),
      owner.userId,
      owner.providerId ?? null,
      owner.botId ?? null,
      at.toISOString(),
      e.status,
      e.error,
      e.excerpt,
      e.ip,
      e.eventIds ?? null,
    ],
  );
}

/**
 * A page of the log of one provider or bot (newest first), as the API answers it. A provider's
 * accepted requests are recorded on the event they raised (event_log.hook_*, see
 * migrations/0024): the page merges those with webhook_payload_log's rows, by id (both are
 * time-ordered UUIDv7, so one order and one `before` cursor serve both).
 */
export async function payloadLogPage(core: Core, owner: PayloadLogOwner, page: Page) {
  const [column, id] = owner.providerId !== undefined ? ['provider_id', owner.providerId] : ['bot_id', owner.botId];
  const params: unknown[] = [id, owner.userId];
  const limit = Math.min(200, Math.max(1, page.limit ?? 50));
  const rows = await core.db.all<LogRow>(
    `SELECT id, received_at, status_code, error_message, payload_excerpt, source_ip, event_ids
    FROM webhook_payload_log WHERE ${column} = ? AND user_id = ?${pageSql('', page, params)}`,
    params as never[],
  );
  if (owner.providerId !== undefined) {
    const p2: unknown[] = [owner.providerId, owner.userId];
    const accepted = await core.db.all<LogRow>(
      `SELECT id, created_at AS received_at, 202 AS status_code, NULL AS error_message, hook_excerpt AS payload_excerpt,
        hook_ip AS source_ip, hook_event_ids AS event_ids
      FROM event_log WHERE provider_id = ? AND user_id = ? AND hook_ip IS NOT NULL${pageSql('', page, p2)}`,
      p2 as never[],
    );
    for (const r of accepted) if (r.event_ids == null) r.event_ids = [r.id];
    rows.push(...accepted);
    rows.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    rows.length = Math.min(rows.length, limit);
  }
  return {
    entries: rows.map((r) => ({
      id: r.id,
      received_at: r.received_at,
      status_code: Number(r.status_code),
      error_message: r.error_message ?? null,
      // Stored redacted by the inbound route; redacted again in case an older row was not.
      payload_excerpt: r.payload_excerpt == null ? null : redactText(String(r.payload_excerpt)),
      source_ip: r.source_ip ?? null,
      event_ids: Db.json<string[]>(r.event_ids, []),
    })),
  };
}
