/**
 * Hand operations on an event's deliveries, all through the durable queue (never an in-memory
 * send): a resend puts a delivery back in the queue under a new id, "send now" releases a
 * deferred one, "drop" gives one up. Each runs in one transaction that changes the delivery rows,
 * records what was done in `delivery_history` and recomputes the event's status, so any replica's
 * dispatcher picks the rows up; the caller may nudge its local dispatcher. A replay sends events
 * again to chosen targets (new delivery rows where the event had none), recorded the same way.
 */
import type { Core } from '../../core.ts';
import type { Queryable } from '../../db/database.ts';
import { newId } from '../../http/ids.ts';
import { conflict, notFound } from '../../http/problem.ts';
import { liveOf } from '../../live/hints.ts';
import { type EventChange, recomputeEvent } from './dispatcher.ts';

/** Statuses a delivery may be resent from: it is settled (nothing of it is queued, sending or deferred). */
export const RESENDABLE = ['failed', 'dropped', 'sent'] as const;

export type HistoryAction = 'resend' | 'send_now' | 'drop' | 'replay';

interface DeliveryRow {
  id: string;
  event_id: string;
  user_id: string;
  target_id: string;
  status: string;
  attempts: number;
  last_error: string | null;
  last_status_code: number | null;
  sent_at: string | null;
  target_enabled: unknown;
  target_name: string | null;
}

const lock = (q: Queryable) => (q.dialect === 'postgresql' ? ' FOR UPDATE OF d' : '');

async function record(
  q: Queryable,
  now: string,
  actorId: string,
  action: HistoryAction,
  d: DeliveryRow,
  deliveryId: string,
  previousId: string | null,
): Promise<void> {
  await q.run(
    `INSERT INTO delivery_history (id, event_id, user_id, actor_id, action, target_id, delivery_id,
      previous_delivery_id, previous_status,
      previous_attempts, previous_error, previous_status_code, previous_sent_at, created_at) VALUES (?, ?, ?, ?, ?, ?,
      ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      newId(),
      d.event_id,
      d.user_id,
      actorId,
      action,
      d.target_id,
      deliveryId,
      previousId,
      d.status,
      Number(d.attempts ?? 0),
      d.last_error ?? null,
      d.last_status_code == null ? null : Number(d.last_status_code),
      d.sent_at ?? null,
      now,
    ],
  );
}

export interface Resent {
  delivery_id: string;
  previous_delivery_id: string;
  target_id: string;
}

/**
 * Resends one delivery of an event (`deliveryId`: failed, dropped or sent) or, without it, every
 * failed delivery of the event. Each goes back to the queue as a new attempt under a new delivery
 * id (so a channel that recognises repeats by delivery id takes it as a new message); the old
 * attempt's record stays in `delivery_history`. The event must be the caller's (checked by the route).
 */
export async function resendDeliveries(
  core: Core,
  event: { id: string; user_id: string; details: unknown },
  actorId: string,
  deliveryId?: string,
): Promise<Resent[]> {
  const now = core.clock.now().toISOString();
  const changes: EventChange[] = [];
  const out = await core.db.tx(async (q) => {
    const select = `SELECT d.id, d.event_id, d.user_id, d.target_id, d.status, d.attempts, d.last_error,
      d.last_status_code, d.sent_at,
        t.enabled AS target_enabled, t.name AS target_name
      FROM deliveries d JOIN targets t ON t.id = d.target_id WHERE d.event_id = ?`;
    let rows: DeliveryRow[];
    if (deliveryId) {
      const row = await q.get<DeliveryRow>(`${select} AND d.id = ?${lock(q)}`, [event.id, deliveryId]);
      if (!row) throw notFound('Delivery');
      if (!(RESENDABLE as readonly string[]).includes(row.status)) {
        throw conflict(
          `The delivery is ${row.status}; only a failed, dropped or sent delivery can be resent.`,
          'delivery_not_resendable',
          { status: row.status },
        );
      }
      rows = [row];
    } else {
      rows = await q.all<DeliveryRow>(`${select} AND d.status = 'failed' ORDER BY d.id${lock(q)}`, [event.id]);
      if (!rows.length) {
        // Deleting a target deletes its deliveries; the event's recorded details still name it.
        const recorded = (event.details as { targets?: { target_id: string; status: string }[] } | null)?.targets ?? [];
        const failedIds = [...new Set(recorded.filter((x) => x.status === 'failed').map((x) => x.target_id))];
        const left = failedIds.length
          ? await q.all<{ id: string }>(
              `SELECT id FROM targets WHERE id IN (${failedIds.map(() => '?').join(',')})`,
              failedIds,
            )
          : [];
        const gone = failedIds.filter((id) => !left.some((l) => l.id === id));
        if (gone.length)
          throw conflict(
            'The failed deliveries of this event went to targets that were deleted since; there is nothing ' +
              'to resend them to.',
            'target_deleted',
            { target_ids: gone },
          );
        throw conflict('This event has no failed delivery to resend.', 'nothing_to_resend');
      }
    }
    const disabled = rows.filter(
      (r) => r.target_enabled === false || r.target_enabled === 0 || r.target_enabled === '0',
    );
    if (disabled.length) {
      throw conflict(
        `The target ${disabled[0]!.target_name ?? disabled[0]!.target_id} is disabled; enable it before resending.`,
        'target_disabled',
        { target: disabled[0]!.target_name ?? disabled[0]!.target_id },
      );
    }
    const out: Resent[] = [];
    for (const r of rows) {
      const id = newId();
      // The row keeps its place (event, target, tracker) and starts over as a new attempt.
      const n = await q.run(
        `UPDATE deliveries SET id = ?, status = 'queued', reason = NULL, attempts = 0, next_attempt_at = ?, lease_until
          = NULL,
          last_error = NULL, last_status_code = NULL, sent_at = NULL, parts_sent = 0, created_at = ?, updated_at = ?
          WHERE id = ? AND status = ?`,
        [id, now, now, now, r.id, r.status],
      );
      if (n !== 1)
        throw conflict('The delivery changed while it was being resent; reload and try again.', 'delivery_changed');
      await record(q, now, actorId, 'resend', r, id, r.id);
      out.push({ delivery_id: id, previous_delivery_id: r.id, target_id: r.target_id });
    }
    await recomputeEvent(q, event.id).then((c) => c && changes.push(c));
    return out;
  });
  announce(core, changes);
  return out;
}

/** Tells the owners' live streams, after the commit, that these events changed (and their deferred queue). */
function announce(core: Core, changes: EventChange[], deferred = false): void {
  const live = liveOf(core.services);
  for (const c of changes) {
    live.publish(c.user_id, {
      kind: 'event',
      id: c.id,
      provider_id: c.provider_id,
      dispatch_status: c.dispatch_status,
    });
    if (deferred) live.publish(c.user_id, { kind: 'deferred' });
  }
}

/**
 * A deferred delivery of the caller, released now (`send_now`: back to the queue, due at once) or
 * given up (`drop`). 404 when it is not the caller's, 409 `not_deferred` when it no longer waits
 * (released at the end of quiet hours meanwhile, or already handled).
 */
export async function settleDeferred(
  core: Core,
  userId: string,
  deliveryId: string,
  actorId: string,
  action: 'send_now' | 'drop',
): Promise<{ delivery_id: string; event_id: string; status: string }> {
  const now = core.clock.now().toISOString();
  const changes: EventChange[] = [];
  const out = await core.db.tx(async (q) => {
    const row = await q.get<DeliveryRow>(
      `SELECT d.id, d.event_id, d.user_id, d.target_id, d.status, d.attempts, d.last_error, d.last_status_code,
        d.sent_at,
        NULL AS target_enabled, NULL AS target_name FROM deliveries d WHERE d.id = ? AND d.user_id = ?${lock(q)}`,
      [deliveryId, userId],
    );
    if (!row) throw notFound('Deferred delivery');
    // The dispatcher's release takes the deferred row FOR UPDATE SKIP LOCKED: holding it here keeps the two apart.
    const waiting = await q.get(
      `SELECT id FROM deferred_dispatch WHERE delivery_id = ?${q.dialect === 'postgresql' ? ' FOR UPDATE' : ''}`,
      [deliveryId],
    );
    if (row.status !== 'deferred' || !waiting) {
      throw conflict(`The delivery is ${row.status}, no longer deferred.`, 'not_deferred', { status: row.status });
    }
    await q.run('DELETE FROM deferred_dispatch WHERE delivery_id = ?', [deliveryId]);
    const status = action === 'send_now' ? 'queued' : 'dropped';
    const n = await q.run(
      'UPDATE deliveries SET status = ?, reason = ?, next_attempt_at = ?, updated_at = ? WHERE id = ? AND ' +
        `status = 'deferred'`,
      [status, action === 'drop' ? 'dropped by hand while deferred by quiet hours' : null, now, now, deliveryId],
    );
    if (n !== 1) throw conflict('The delivery is no longer deferred.', 'not_deferred', { status: row.status });
    await record(q, now, actorId, action, row, deliveryId, null);
    await recomputeEvent(q, row.event_id).then((c) => c && changes.push(c));
    return { delivery_id: deliveryId, event_id: row.event_id, status };
  });
  announce(core, changes, true);
  return out;
}

export interface ReplayOutcome {
  /**
   * Deliveries put in the queue: `added` to targets the event never had, `replaced` ones it had (a new attempt, like a
   * resend).
   */
  queued: number;
  added: number;
  replaced: number;
  /** Pairs left alone because their delivery is still queued, sending or deferred. */
  skipped: { event_id: string; target_id: string; status: string }[];
}

/**
 * Replays events to targets through the durable queue; they are rendered when sent, so with the
 * templates and the target's locale of that moment. Per event, in one transaction: a target the
 * event had a settled delivery for (failed, dropped or sent) gets it back as a new attempt under a
 * new id (the old attempt's record kept, as a resend); a target it never had gets a new delivery
 * row; one whose delivery is still queued, sending or deferred is skipped. Each is recorded in
 * `delivery_history` as `replay` with who did it. Events and targets must be the caller's (checked
 * by the route); events are taken in the order given.
 */
export async function replayDeliveries(
  core: Core,
  eventIds: string[],
  targetIds: string[],
  actorId: string,
): Promise<ReplayOutcome> {
  const out: ReplayOutcome = { queued: 0, added: 0, replaced: 0, skipped: [] };
  const changes: EventChange[] = [];
  for (const eventId of eventIds) {
    await core.db.tx(async (q) => {
      const now = core.clock.now().toISOString();
      const event = await q.get<{ id: string; user_id: string }>('SELECT id, user_id FROM event_log WHERE id = ?', [
        eventId,
      ]);
      if (!event) return;
      const marks = targetIds.map(() => '?').join(',');
      const rows = await q.all<DeliveryRow>(
        `SELECT d.id, d.event_id, d.user_id, d.target_id, d.status, d.attempts, d.last_error, d.last_status_code,
          d.sent_at,
          NULL AS target_enabled, NULL AS target_name FROM deliveries d WHERE d.event_id = ? AND d.target_id IN
          (${marks}) ORDER BY d.id${lock(q)}`,
        [eventId, ...targetIds],
      );
      for (const targetId of targetIds) {
        const r = rows.find((x) => x.target_id === targetId);
        const id = newId();
        if (r) {
          if (!(RESENDABLE as readonly string[]).includes(r.status)) {
            out.skipped.push({ event_id: eventId, target_id: targetId, status: r.status });
            continue;
          }
          const n = await q.run(
            `UPDATE deliveries SET id = ?, status = 'queued', reason = NULL, attempts = 0, next_attempt_at = ?,
              lease_until = NULL,
              last_error = NULL, last_status_code = NULL, sent_at = NULL, parts_sent = 0, created_at = ?, updated_at = ?
              WHERE id = ? AND status = ?`,
            [id, now, now, now, r.id, r.status],
          );
          if (n !== 1) {
            out.skipped.push({ event_id: eventId, target_id: targetId, status: 'changed' });
            continue;
          }
          await record(q, now, actorId, 'replay', r, id, r.id);
          out.replaced++;
        } else {
          await q.run(
            `INSERT INTO deliveries (id, event_id, user_id, tracker_id, target_id, status, attempts, next_attempt_at,
              created_at, updated_at)
            VALUES (?, ?, ?, NULL, ?, 'queued', 0, ?, ?, ?)`,
            [id, eventId, event.user_id, targetId, now, now, now],
          );
          // Nothing was there before: the history row says so (`none`, no previous delivery).
          await record(
            q,
            now,
            actorId,
            'replay',
            {
              id,
              event_id: eventId,
              user_id: event.user_id,
              target_id: targetId,
              status: 'none',
              attempts: 0,
              last_error: null,
              last_status_code: null,
              sent_at: null,
              target_enabled: null,
              target_name: null,
            },
            id,
            null,
          );
          out.added++;
        }
        out.queued++;
      }
      await recomputeEvent(q, eventId).then((c) => c && changes.push(c));
    });
  }
  announce(core, changes);
  return out;
}
