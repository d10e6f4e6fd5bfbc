import type { Core } from '../../core.ts';
import { Database, type Queryable } from '../../db/database.ts';
import { newId } from '../../http/ids.ts';
import { liveOf } from '../../live/hints.ts';
import type { EmittedEvent, Severity } from '../../plugin-api/index.ts';
import type { ProviderRow } from '../../plugins/host.ts';
import { configCacheOf } from '../config-cache.ts';
import type { EventDbRow } from '../definitions/event.ts';
import type { TargetDbRow } from '../definitions/target.ts';
import { InvalidEventError } from '../service.ts';
import { type Decision, type DispatchStatus, decide, merge, type TrackerRules } from './decide.ts';

/** The event as a send reads it: what ingest hands over equals what the dispatcher reads back (send-context.ts). */
export type SendEvent = Pick<
  EventDbRow,
  | 'id'
  | 'user_id'
  | 'provider_id'
  | 'provider_kind'
  | 'provider_name'
  | 'event_type'
  | 'severity'
  | 'payload'
  | 'extras'
  | 'occurred_at'
  | 'created_at'
  | 'test'
>;

/** A delivery written already claimed by this worker, with what its send needs, for the dispatcher to take at once. */
export interface HandedDelivery {
  row: {
    id: string;
    event_id: string;
    user_id: string;
    tracker_id: string | null;
    target_id: string;
    attempts: number;
  };
  event: SendEvent;
  target: TargetDbRow;
  trackerName: string | null;
  override: { title: string; body: string } | null;
}

/** `queued`: deliveries wait in the queue for the dispatcher (not handed off). */
export interface IngestResult {
  eventIds: string[];
  queued: boolean;
  deferredUsers: string[];
  handed: HandedDelivery[];
}

/** Options of one write: `handoff` claims queued deliveries for this worker; `extra` runs in the same transaction. */
export interface WriteOptions {
  /** When set, queued deliveries are written as `sending` with a lease until this time and handed back. */
  leaseUntil?: Date;
  extra?: (q: Queryable, eventId: string) => Promise<void>;
  /** A test event raised by an operator: recorded with `test` set, its messages marked as a test. */
  test?: boolean;
  /** The webhook request that raised the event, recorded on the event's own row (see WebhookMark). */
  webhook?: WebhookMark;
  /** The caller read the configuration's version for this request already (the webhook path's find). */
  configSynced?: boolean;
}

/**
 * An accepted webhook request, written as columns of the event it raised (its last one) rather than
 * as a webhook_payload_log row and a plugin_store row: the request's payload-log entry (status 202)
 * and the replay key the plugin returned, unique per provider while it has not expired.
 */
export interface WebhookMark {
  ip: string;
  excerpt: string | null;
  /** The ids of the events the request raised before this one (the log entry lists them all). */
  earlierIds?: string[];
  replayKey?: { key: string; ttlSeconds: number };
}

/** The replay key is already held: by another event of the provider, or in its plugin_store (a replayed delivery). */
export class ReplayedError extends Error {
  constructor() {
    super('delivery already processed');
    this.name = 'ReplayedError';
  }
}

const EVENT_COLUMNS =
  'id, user_id, provider_id, provider_kind, event_type, severity, payload, extras, tracker_ids, ' +
  'dispatch_status, details, occurred_at, created_at, test, replay_key, replay_expires_at, hook_ip, ' +
  'hook_excerpt, hook_event_ids';
const INSERT_EVENT =
  `INSERT INTO event_log (${EVENT_COLUMNS}) ` + 'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
/**
 * With a replay key: a key another event holds makes the insert a no-op (0 rows), on both backends without aborting the
 * transaction.
 */
const INSERT_EVENT_KEYED =
  `${INSERT_EVENT} ON CONFLICT (provider_id, replay_key) ` + 'WHERE replay_key IS NOT NULL DO NOTHING';
/**
 * A live key of the provider in plugin_store (a delivery that recorded no event, or one whose event the retention
 * prune deleted): read in the write's transaction, so the core refuses a replay itself (contract 1.4.0) with the
 * expiry rule of DbInstanceStore.get. The keys on event rows are the keyed insert's own conflict.
 */
const HELD_IN_STORE =
  'SELECT 1 AS held FROM plugin_store WHERE instance_id = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)';
const DELIVERY_COLUMNS =
  '(id, event_id, user_id, tracker_id, target_id, status, reason, attempts, next_attempt_at, lease_until, ' +
  'created_at, updated_at)';
const DEFERRED_COLUMNS =
  '(id, delivery_id, event_id, user_id, tracker_id, target_id, event_type, release_at, created_at)';
/** Rows per multi-row INSERT (well under SQLite's 32,766 and PostgreSQL's 65,535 bound parameters). */
const ROWS_PER_INSERT = 200;

/** `INSERT INTO table cols VALUES (…), (…)` for the rows given, in chunks; one statement for the usual handful. */
async function insertRows(
  q: Queryable,
  table: string,
  columns: string,
  width: number,
  rows: unknown[][],
): Promise<void> {
  const one = `(${Array(width).fill('?').join(', ')})`;
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    const chunk = rows.slice(i, i + ROWS_PER_INSERT);
    await q.run(
      `INSERT INTO ${table} ${columns} VALUES ${Array(chunk.length).fill(one).join(', ')}`,
      chunk.flat() as never[],
    );
  }
}

/**
 * A tracker → target link with the whole target row, the tracker's rules and name, and the user's template override.
 */
interface LinkRow extends TargetDbRow {
  id: string;
  tracker_id: string;
  target_id: string;
  event_types: string;
  quiet_hours: string | null;
  quiet_policies: string;
  tracker_name: string | null;
  override_title: string | null;
  override_body: string | null;
}

/**
 * Writes an event and its deliveries in one transaction: when this resolves the event is durable
 * and every linked target has a queued, deferred or dropped delivery.
 */
export async function ingestEvent(
  core: Core,
  provider: ProviderRow,
  e: EmittedEvent,
  opts: WriteOptions = {},
): Promise<IngestResult> {
  const problem = core.plugins.validateEvent(provider.kind, e);
  if (problem) throw new InvalidEventError(problem);
  const spec = core.plugins.provider(provider.kind)!.def.manifest.events![e.type]!;
  const now = core.clock.now();
  // One read gives the decision's inputs and everything a send needs (target row, tracker name,
  // the user's template override in the target's locale), so a handed-off delivery reads nothing more.
  // Kept in memory while the configuration's version holds (config-cache.ts).
  const cache = configCacheOf(core.db);
  if (!opts.configSynced) await cache.sync(core.db);
  const links = await cache.get(`links\u0000${provider.id}\u0000${provider.user_id}\u0000${e.type}`, () =>
    core.db.all<LinkRow>(
      `SELECT tg.*, tt.tracker_id, tt.target_id, tr.event_types, tr.quiet_hours, tr.quiet_policies, tr.name AS
        tracker_name,
              tp.title AS override_title, tp.body AS override_body
         FROM trackers tr JOIN tracker_targets tt ON tt.tracker_id = tr.id JOIN targets tg ON tg.id = tt.target_id
         LEFT JOIN templates tp ON tp.user_id = ? AND tp.event_type = ? AND tp.locale = (CASE WHEN tg.locale = 'ru'
         THEN 'ru' ELSE 'en' END)
        WHERE tr.provider_id = ? AND tr.enabled = ? AND tg.enabled = ?`,
      [provider.user_id, e.type, provider.id, true, true],
    ),
  );
  const only = e.trackerIds ? new Set(e.trackerIds) : undefined;
  const perTarget = new Map<string, { d: Decision; trackerId: string; link?: LinkRow }>();
  for (const l of links) {
    if (only && !only.has(l.tracker_id)) continue;
    const rules: TrackerRules = {
      id: l.tracker_id,
      event_types: Database.json(l.event_types, {}),
      quiet_hours: Database.json(l.quiet_hours, null),
      quiet_policies: Database.json(l.quiet_policies, {}),
    };
    const d = decide(rules, e.type, spec, now, e.severity ?? spec.severity);
    const prev = perTarget.get(l.target_id);
    const m = merge(prev?.d, d);
    if (m !== prev?.d) perTarget.set(l.target_id, { d: m, trackerId: l.tracker_id, link: l });
  }
  return writeEvent(
    core,
    {
      userId: provider.user_id,
      providerId: provider.id,
      providerName: provider.name,
      providerKind: provider.kind,
      type: e.type,
      severity: e.severity ?? spec.severity,
      payload: e.payload,
      extras: e.extras,
      trackerIds: e.trackerIds,
      occurredAt: e.occurredAt ?? now,
      deliveries: perTarget,
    },
    opts,
  );
}

export interface EventWrite {
  userId: string;
  providerId: string | null;
  providerName?: string;
  providerKind: string;
  type: string;
  severity: Severity;
  payload: Record<string, unknown>;
  extras?: Record<string, string>;
  trackerIds?: string[];
  occurredAt: Date;
  /** Per target; `link` (from ingestEvent) carries what a send needs, so the delivery can be handed off. */
  deliveries: Map<string, { d: Decision; trackerId: string | null; link?: LinkRow }>;
}

export async function writeEvent(core: Core, w: EventWrite, opts: WriteOptions = {}): Promise<IngestResult> {
  const now = core.clock.now().toISOString();
  const id = newId();
  const decisions = [...w.deliveries.values()].map((x) => x.d);
  let status: DispatchStatus = 'dropped';
  if (decisions.some((d) => d.status === 'queued')) status = 'pending';
  else if (decisions.some((d) => d.status === 'deferred')) status = 'deferred';
  const details =
    decisions.length === 0
      ? { reason: 'no enabled tracker is linked to an enabled target for this event' }
      : status === 'dropped'
        ? { reason: (decisions[0] as { reason: string }).reason }
        : null;
  let deferred = false;
  let left = false;
  const handed: HandedDelivery[] = [];
  const lease = opts.leaseUntil?.toISOString();
  const occurredAt = w.occurredAt.toISOString();
  const hook = opts.webhook;
  const replay = hook?.replayKey && w.providerId !== null ? hook.replayKey : undefined;
  const eventRow = [
    id,
    w.userId,
    w.providerId,
    w.providerKind,
    w.type,
    w.severity,
    w.payload,
    w.extras ?? null,
    w.trackerIds ?? null,
    status,
    details,
    occurredAt,
    now,
    opts.test === true,
    replay?.key ?? null,
    replay ? new Date(Date.parse(now) + replay.ttlSeconds * 1000).toISOString() : null,
    hook?.ip ?? null,
    hook?.excerpt ?? null,
    hook?.earlierIds?.length ? [...hook.earlierIds, id] : null,
  ];
  // Every row is built before the transaction: inside it only the statements run (one event row,
  // one multi-row insert of the deliveries, one of the deferrals if any).
  const deliveryRows: unknown[][] = [];
  const deferredRows: unknown[][] = [];
  for (const [targetId, { d, trackerId, link }] of w.deliveries) {
    const did = newId();
    // A queued delivery this worker can send at once is written already claimed (leased, first
    // attempt): no claim round trip, no re-read. Should the worker die, the lease runs out and any
    // worker claims it again, exactly as a claimed row.
    const take = lease !== undefined && link !== undefined && d.status === 'queued';
    deliveryRows.push([
      did,
      id,
      w.userId,
      trackerId,
      targetId,
      take ? 'sending' : d.status,
      d.status === 'dropped' ? d.reason : null,
      take ? 1 : 0,
      d.status === 'deferred' ? d.releaseAt.toISOString() : now,
      take ? lease : null,
      now,
      now,
    ]);
    if (d.status === 'queued' && !take) left = true;
    if (take) {
      handed.push({
        row: { id: did, event_id: id, user_id: w.userId, tracker_id: trackerId, target_id: targetId, attempts: 1 },
        event: {
          id,
          user_id: w.userId,
          provider_id: w.providerId,
          provider_kind: w.providerKind,
          provider_name: w.providerName ?? null,
          event_type: w.type,
          severity: w.severity,
          payload: w.payload,
          extras: w.extras ?? null,
          occurred_at: occurredAt,
          created_at: now,
          test: opts.test === true,
        },
        target: link,
        trackerName: link.tracker_name ?? null,
        override:
          link.override_title !== null && link.override_title !== undefined
            ? { title: link.override_title, body: String(link.override_body ?? '') }
            : null,
      });
    }
    if (d.status === 'deferred') {
      deferred = true;
      deferredRows.push([newId(), did, id, w.userId, trackerId, targetId, w.type, d.releaseAt.toISOString(), now]);
    }
  }
  await core.db.tx(async (q) => {
    if (!replay) await q.run(INSERT_EVENT, eventRow as never[]);
    else if (await q.get(HELD_IN_STORE, [w.providerId, replay.key, now])) throw new ReplayedError();
    else if ((await q.run(INSERT_EVENT_KEYED, eventRow as never[])) === 0) {
      // Another event holds the key. Once expired it no longer counts: it is let go and the insert
      // tried again; a live one means this delivery was already processed.
      await q.run(
        'UPDATE event_log SET replay_key = NULL WHERE provider_id = ? AND replay_key = ? AND replay_expires_at <= ?',
        [w.providerId, replay.key, now],
      );
      if ((await q.run(INSERT_EVENT_KEYED, eventRow as never[])) === 0) throw new ReplayedError();
    }
    if (deliveryRows.length) await insertRows(q, 'deliveries', DELIVERY_COLUMNS, 12, deliveryRows);
    if (deferredRows.length) await insertRows(q, 'deferred_dispatch', DEFERRED_COLUMNS, 9, deferredRows);
    if (opts.extra) await opts.extra(q, id);
  });
  core.metrics.eventLogTotal.inc({ status, event_type: w.type });
  const live = liveOf(core.services);
  live.publish(w.userId, { kind: 'event', id, provider_id: w.providerId, dispatch_status: status });
  if (deferred) live.publish(w.userId, { kind: 'deferred' });
  if (hook) live.publish(w.userId, { kind: 'webhook_log', provider_id: w.providerId });
  return { eventIds: [id], queued: left, deferredUsers: deferred ? [w.userId] : [], handed };
}
