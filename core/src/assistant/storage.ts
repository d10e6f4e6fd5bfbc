/**
 * Each user's storage limit for what the assistant keeps of theirs: documents, memory entries and
 * report PDFs. The limit is the user's `max_storage_mb` when an administrator set one, else
 * SERVICE_USER_STORAGE_MB (default 200), in MB of 1,000,000 bytes.
 *
 * What counts, in bytes, measured from the user's rows (UTF-8, as stored):
 * - a document: its file name, its extracted text, and the text again as its search chunks
 *   (so a document counts about twice its text; the uploaded file itself is not kept);
 * - a memory entry: its content and category;
 * - a report: its PDF file.
 * The database also keeps indexes and lower-case search copies of this text, which are not
 * counted: plan for the database to take two to three times the counted total.
 *
 * A write that would take the user past the limit is refused: an upload with 413, a memory
 * entry or a report with 422, code `storage_quota_exceeded`, the limit and the usage in the
 * sentence and in `params`. Deleting always works, and so does a change that does not grow.
 * The check runs inside the write's transaction, before the write and after a lock on the user's
 * row on PostgreSQL, so concurrent writes of one user cannot pass the limit together.
 */
import { caller, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { HttpError } from '../http/problem.ts';
import type { App } from '../http/server.ts';
import type { PublicUser } from '../users/users.ts';
import { StorageView } from './definitions/storage.ts';

/** One MB as the limit counts it (and as the web client shows sizes). */
export const MB = 1_000_000;

export interface StorageUsage {
  documents: number;
  memory: number;
  reports: number;
  total: number;
}

/**
 * The bytes a user's documents (name, text, search chunks), memory entries (content, category) and reports (PDF size)
 * take.
 */
export async function storageUsage(q: Queryable, userId: string): Promise<StorageUsage> {
  // octet_length reads the stored length (SQLite from the record header, PostgreSQL from the
  // TOAST header), so a large document costs no more to count than a small one.
  const row = await q.get<{ d: unknown; c: unknown; m: unknown; r: unknown }>(
    `SELECT
      (SELECT COALESCE(SUM(octet_length(filename) + octet_length(content)), 0) FROM documents WHERE user_id = ?) AS d,
      (SELECT COALESCE(SUM(octet_length(content)), 0) FROM document_chunks WHERE user_id = ?) AS c,
      (SELECT COALESCE(SUM(octet_length(content) + COALESCE(octet_length(category), 0)), 0) FROM memory_entries WHERE
      user_id = ?) AS m,
      (SELECT COALESCE(SUM(size_bytes), 0) FROM reports WHERE user_id = ?) AS r`,
    [userId, userId, userId, userId],
  );
  const documents = Number(row?.d ?? 0) + Number(row?.c ?? 0);
  const memory = Number(row?.m ?? 0);
  const reports = Number(row?.r ?? 0);
  return { documents, memory, reports, total: documents + memory + reports };
}

/** The user's limit in MB: their own when set, else SERVICE_USER_STORAGE_MB. */
export const storageLimitMb = (core: Core, user: Pick<PublicUser, 'max_storage_mb'>): number =>
  user.max_storage_mb ?? core.config.userStorageMb;

/** Bytes as the sentences show them: MB with up to two decimals. */
const mb = (bytes: number): string => `${Number((bytes / MB).toFixed(2))} MB`;

export type StoredThing = 'document' | 'memory entry' | 'report';

/**
 * The bytes `texts` take once stored, as {@link storageUsage} counts them: UTF-8, and on
 * PostgreSQL a NUL (which its text cannot hold) becomes U+FFFD, three bytes (see db/database.ts).
 */
export function storedBytes(dialect: Queryable['dialect'], ...texts: (string | null | undefined)[]): number {
  let n = 0;
  for (const s of texts) {
    if (!s) continue;
    n += Buffer.byteLength(s);
    if (dialect === 'postgresql' && s.includes('\u0000')) n += 2 * (s.split('\u0000').length - 1);
  }
  return n;
}

/**
 * Inside the write's transaction `q`, before the write: refuses (throws, so nothing is written)
 * when `added` more bytes would take the user past the limit. Exactly at the limit is allowed.
 */
export async function reserveStorage(
  core: Core,
  q: Queryable,
  user: Pick<PublicUser, 'id' | 'max_storage_mb'>,
  added: number,
  what: StoredThing,
): Promise<void> {
  if (added <= 0) return;
  await lockUserStorage(q, user.id);
  const used = (await storageUsage(q, user.id)).total;
  const limitMb = storageLimitMb(core, user);
  if (used + added > limitMb * MB) throw storageExceeded(what, limitMb, used, added);
}

/** Before the work of a write (a PDF's extraction, a report's rendering): refuses when nothing more fits. */
export async function checkRoomLeft(
  core: Core,
  user: Pick<PublicUser, 'id' | 'max_storage_mb'>,
  what: StoredThing,
): Promise<void> {
  const used = (await storageUsage(core.db, user.id)).total;
  const limitMb = storageLimitMb(core, user);
  if (used >= limitMb * MB) throw storageExceeded(what, limitMb, used, null);
}

/**
 * Locks the user's row for the rest of the transaction on PostgreSQL (SQLite writes one transaction at a time anyway).
 */
export async function lockUserStorage(q: Queryable, userId: string): Promise<void> {
  if (q.dialect === 'postgresql') await q.get('SELECT id FROM users WHERE id = ? FOR UPDATE', [userId]);
}

/**
 * 413 for an upload, 422 otherwise, naming the limit, the usage and what the write needed (null: not known yet, nothing
 * fits).
 */
export function storageExceeded(what: StoredThing, limitMb: number, used: number, needed: number | null): HttpError {
  const limit = limitMb * MB;
  const status = what === 'document' ? 413 : 422;
  const need =
    needed === null
      ? `You have used ${mb(used)} (${used} bytes)`
      : `This ${what} needs ${mb(needed)} (${needed} bytes), but you have used ${mb(used)} (${used} bytes)`;
  const detail =
    `${need} of your storage limit of ${limitMb} MB (${limit} bytes) for documents, memory entries and ` +
    `reports${needed === null ? ', so nothing more can be stored' : ''}. Delete documents, memory entries or ` +
    'reports you no longer need, or ask an administrator to raise your limit.';
  return new HttpError(status, 'storage_quota_exceeded', detail, {
    params: {
      what,
      limit_mb: limitMb,
      limit_bytes: limit,
      used_bytes: used,
      used_mb: Number((used / MB).toFixed(2)),
      ...(needed === null ? {} : { needed_bytes: needed, needed_mb: Number((needed / MB).toFixed(2)) }),
    },
  });
}

/** `GET /api/v1/storage`: the caller's usage against their limit. */
export async function storageRoutes(app: App, core: Core): Promise<void> {
  app.get(
    '/api/v1/storage',
    {
      schema: {
        tags: ['assistant'],
        summary: 'Your storage: used and limit',
        description:
          'What your documents, memory entries and reports take against your storage limit ' +
          '(SERVICE_USER_STORAGE_MB, or the limit an administrator set for you). A document counts its ' +
          'name, its text and the text again as search chunks; a memory entry its content and category; a ' +
          'report its PDF. An upload past the limit is refused with 413, a memory entry or report with 422 ' +
          '(`storage_quota_exceeded`).',
        response: { 200: StorageView },
      },
      preHandler: requireUser(core),
    },
    async (req) => {
      const user = caller(req);
      const used = await storageUsage(core.db, user.id);
      const limitMb = storageLimitMb(core, user);
      return {
        used_bytes: used.total,
        limit_bytes: limitMb * MB,
        limit_mb: limitMb,
        custom_limit: user.max_storage_mb !== null,
        exceeded: used.total >= limitMb * MB,
        documents_bytes: used.documents,
        memory_bytes: used.memory,
        reports_bytes: used.reports,
      };
    },
  );
}
