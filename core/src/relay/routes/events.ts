/** The caller's event log and pending deferred notifications: `GET /api/events`, `GET /api/events/{id}`, `GET /api/deferred`. */
import Type from 'typebox';
import type { App } from '../../http/server.ts';
import type { Core } from '../../core.ts';
import { requireUser, caller } from '../../auth/guard.ts';
import { IdParams, ListQuery, Uuid } from '../../http/schemas.ts';
import { Database as Db } from '../../db/database.ts';
import { redactObject } from '../../logging/redact.ts';
import { owned, pageSql, type Page } from './common.ts';

const EventQuery = Type.Object({
  ...ListQuery.properties,
  provider_id: Type.Optional(Uuid),
  event_type: Type.Optional(Type.String({ maxLength: 100 })),
  dispatch_status: Type.Optional(Type.String({ maxLength: 32 })),
});

type Row = Record<string, any>;

async function withDeliveries(core: Core, rows: Row[]) {
  const ids = rows.map((r) => r.id as string);
  const deliveries = ids.length
    ? await core.db.all(`SELECT event_id, target_id, status, attempts, last_error, last_status_code FROM deliveries WHERE event_id IN (${ids.map(() => '?').join(', ')}) ORDER BY id`, ids)
    : [];
  return rows.map((r) => ({
    id: r.id as string, provider_id: (r.provider_id ?? null) as string | null, provider_kind: r.provider_kind as string,
    event_type: r.event_type as string, severity: r.severity as string,
    // Payloads come from outside services; fields named like secrets are never shown back.
    payload: redactObject(Db.json<Record<string, unknown>>(r.payload, {})),
    details: Db.json<unknown>(r.details, null),
    tracker_ids: Db.json<string[] | null>(r.tracker_ids, null),
    dispatch_status: r.dispatch_status as string, occurred_at: r.occurred_at as string, created_at: r.created_at as string,
    deliveries: deliveries.filter((d) => d.event_id === r.id).map((d) => ({
      target_id: d.target_id as string, status: d.status as string, attempts: Number(d.attempts ?? 0),
      last_error: (d.last_error ?? null) as string | null, last_status_code: d.last_status_code == null ? null : Number(d.last_status_code),
    })),
  }));
}

export async function eventRoutes(app: App, core: Core): Promise<void> {
  const auth = requireUser(core);

  app.get('/api/events', { schema: { tags: ['relay'], summary: 'List your recorded events, newest first, with their deliveries', description: 'Every event a provider emitted, as validated against its plugin\'s payload schema (fields named like secrets are redacted), with one delivery per linked target. `dispatch_status` is `pending` while a delivery is queued or sending, `deferred` while one waits out quiet hours, then `dispatched`, `partial`, `failed` or `dropped` (nothing to deliver: no linked target, the event type is off on the tracker, or quiet hours drop it). Filter by `provider_id`, `event_type` and `dispatch_status`.', querystring: EventQuery }, preHandler: auth }, async (req) => {
    const q = req.query as Page & { provider_id?: string; event_type?: string; dispatch_status?: string };
    const params: unknown[] = [caller(req).id];
    let where = 'user_id = ?';
    if (q.provider_id) { where += ' AND provider_id = ?'; params.push(q.provider_id); }
    if (q.event_type) { where += ' AND event_type = ?'; params.push(q.event_type); }
    if (q.dispatch_status) { where += ' AND dispatch_status = ?'; params.push(q.dispatch_status); }
    const rows = await core.db.all(`SELECT * FROM event_log WHERE ${where}${pageSql('', q, params)}`, params as never[]);
    return { events: await withDeliveries(core, rows) };
  });

  app.get('/api/events/:id', { schema: { tags: ['relay'], summary: 'Read one event with its deliveries', description: 'Each delivery shows its status (`queued`, `sending`, `deferred`, `sent`, `failed`, `dropped`), attempts, and the last error and HTTP status code the target plugin reported.', params: IdParams }, preHandler: auth }, async (req) => {
    const row = await owned(core, 'event_log', (req.params as { id: string }).id, caller(req).id, 'Event');
    return (await withDeliveries(core, [row]))[0];
  });

  app.get('/api/deferred', { schema: { tags: ['relay'], summary: 'List notifications held back by quiet hours', description: 'Deliveries of event types whose quiet-hours policy is `defer`, each with the time its tracker\'s quiet hours end (`release_at`), when they are sent.', querystring: ListQuery }, preHandler: auth }, async (req) => {
    const params: unknown[] = [caller(req).id];
    const rows = await core.db.all(`SELECT d.id, d.event_id, d.event_type, d.tracker_id, d.target_id, d.release_at, d.created_at,
        t.name AS target_name, t.kind AS target_kind, tr.name AS tracker_name
      FROM deferred_dispatch d
      LEFT JOIN targets t ON t.id = d.target_id
      LEFT JOIN trackers tr ON tr.id = d.tracker_id
      WHERE d.user_id = ?${pageSql('d', req.query as Page, params)}`, params as never[]);
    return {
      deferred: rows.map((r) => ({
        id: r.id as string, event_id: r.event_id as string, event_type: r.event_type as string,
        tracker_id: (r.tracker_id ?? null) as string | null, tracker_name: (r.tracker_name ?? null) as string | null,
        target_id: r.target_id as string, target_name: (r.target_name ?? null) as string | null, target_kind: (r.target_kind ?? null) as string | null,
        release_at: r.release_at as string, created_at: r.created_at as string,
      })),
    };
  });
}
