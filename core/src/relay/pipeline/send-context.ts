/**
 * What the sends of one claimed batch need from the database, read in four queries for the whole
 * batch instead of four per delivery: the events (with their provider's name), the targets, the
 * tracker names and the users' template overrides.
 */
import type { Queryable } from '../../db/database.ts';
import type { EventDbRow } from '../definitions/event.ts';
import type { TargetDbRow } from '../definitions/target.ts';
import type { TemplateDbRow } from '../definitions/template.ts';
import type { SendEvent } from './ingest.ts';

export interface SendContext {
  /** Read here, or handed over by ingest with a delivery it wrote (`HandedDelivery`): the same fields either way. */
  events: Map<string, SendEvent>;
  targets: Map<string, TargetDbRow>;
  trackerNames: Map<string, string>;
  /** Key `user|event_type|locale`. */
  overrides: Map<string, { title: string; body: string }>;
}

export const overrideKey = (userId: string, eventType: string, locale: string): string =>
  `${userId}|${eventType}|${locale}`;

const CHUNK = 200;

async function byIds<T>(db: Queryable, sql: (marks: string) => string, ids: string[]): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += CHUNK) {
    const part = ids.slice(i, i + CHUNK);
    out.push(...(await db.all<T>(sql(part.map(() => '?').join(',')), part)));
  }
  return out;
}

export async function loadSendContext(
  db: Queryable,
  rows: { event_id: string; target_id: string; tracker_id: string | null }[],
): Promise<SendContext> {
  const eventIds = [...new Set(rows.map((r) => r.event_id))];
  const targetIds = [...new Set(rows.map((r) => r.target_id))];
  const trackerIds = [...new Set(rows.map((r) => r.tracker_id).filter((x): x is string => !!x))];
  const events = await byIds<EventDbRow>(
    db,
    (m) =>
      'SELECT e.*, p.name AS provider_name FROM event_log e LEFT JOIN providers p ON p.id = e.provider_id ' +
      `WHERE e.id IN (${m})`,
    eventIds,
  );
  const targets = await byIds<TargetDbRow>(db, (m) => `SELECT * FROM targets WHERE id IN (${m})`, targetIds);
  const trackers = trackerIds.length
    ? await byIds<{ id: string; name: string }>(
        db,
        (m) => `SELECT id, name FROM trackers WHERE id IN (${m})`,
        trackerIds,
      )
    : [];
  const userIds = [...new Set(events.map((e) => e.user_id))];
  const types = [...new Set(events.map((e) => e.event_type))];
  const overrides = new Map<string, { title: string; body: string }>();
  if (userIds.length && types.length) {
    const marks = (n: number) => Array.from({ length: n }, () => '?').join(',');
    for (let i = 0; i < userIds.length; i += CHUNK) {
      const users = userIds.slice(i, i + CHUNK);
      const rowsT = await db.all<Pick<TemplateDbRow, 'user_id' | 'event_type' | 'locale' | 'title' | 'body'>>(
        'SELECT user_id, event_type, locale, title, body FROM templates WHERE user_id IN ' +
          `(${marks(users.length)}) AND event_type IN (${marks(types.length)})`,
        [...users, ...types],
      );
      for (const t of rowsT)
        overrides.set(overrideKey(t.user_id, t.event_type, t.locale), { title: t.title, body: t.body });
    }
  }
  return {
    events: new Map(events.map((e) => [e.id, e])),
    targets: new Map(targets.map((t) => [t.id, t])),
    trackerNames: new Map(trackers.map((t) => [t.id, t.name])),
    overrides,
  };
}
