import type { EmittedEvent, Severity } from '../../plugin-api/index.ts';
import type { Core } from '../../core.ts';
import { Database } from '../../db/database.ts';
import type { ProviderRow } from '../../plugins/host.ts';
import { newId } from '../../http/ids.ts';
import { InvalidEventError } from '../service.ts';
import { decide, merge, type Decision, type TrackerRules, type DispatchStatus } from './decide.ts';

export interface IngestResult { eventIds: string[]; queued: boolean; deferredUsers: string[] }

interface LinkRow { tracker_id: string; target_id: string; event_types: string; quiet_hours: string | null; quiet_policies: string }

/** Payloads carrying asset change lists that are both empty say nothing; they are not recorded. */
function isEmptyAssetChange(p: Record<string, unknown>): boolean {
  return Array.isArray(p.assets_added) && Array.isArray(p.assets_removed) && p.assets_added.length === 0 && p.assets_removed.length === 0;
}

/**
 * Writes an event and its deliveries in one transaction: when this resolves the event is durable
 * and every linked target has a queued, deferred or dropped delivery.
 */
export async function ingestEvent(core: Core, provider: ProviderRow, e: EmittedEvent): Promise<IngestResult> {
  const problem = core.plugins.validateEvent(provider.kind, e);
  if (problem) throw new InvalidEventError(problem);
  if (isEmptyAssetChange(e.payload)) return { eventIds: [], queued: false, deferredUsers: [] };
  const spec = core.plugins.provider(provider.kind)!.def.manifest.events![e.type]!;
  const now = core.clock.now();
  const links = await core.db.all<LinkRow>(
    `SELECT tt.tracker_id, tt.target_id, tr.event_types, tr.quiet_hours, tr.quiet_policies
       FROM trackers tr JOIN tracker_targets tt ON tt.tracker_id = tr.id JOIN targets tg ON tg.id = tt.target_id
      WHERE tr.provider_id = ? AND tr.enabled = ? AND tg.enabled = ?`, [provider.id, true, true]);
  const only = e.trackerIds ? new Set(e.trackerIds) : undefined;
  const perTarget = new Map<string, { d: Decision; trackerId: string }>();
  for (const l of links) {
    if (only && !only.has(l.tracker_id)) continue;
    const rules: TrackerRules = { id: l.tracker_id, event_types: Database.json(l.event_types, {}), quiet_hours: Database.json(l.quiet_hours, null), quiet_policies: Database.json(l.quiet_policies, {}) };
    const d = decide(rules, e.type, spec, now);
    const prev = perTarget.get(l.target_id);
    const m = merge(prev?.d, d);
    if (m !== prev?.d) perTarget.set(l.target_id, { d: m, trackerId: l.tracker_id });
  }
  return writeEvent(core, {
    userId: provider.user_id, providerId: provider.id, providerKind: provider.kind, type: e.type, severity: e.severity ?? spec.severity,
    payload: e.payload, extras: e.extras, trackerIds: e.trackerIds, occurredAt: e.occurredAt ?? now, deliveries: perTarget,
  });
}

export interface EventWrite {
  userId: string; providerId: string | null; providerKind: string; type: string; severity: Severity;
  payload: Record<string, unknown>; extras?: Record<string, string>; trackerIds?: string[]; occurredAt: Date;
  deliveries: Map<string, { d: Decision; trackerId: string | null }>;
}

export async function writeEvent(core: Core, w: EventWrite): Promise<IngestResult> {
  const now = core.clock.now().toISOString();
  const id = newId();
  const decisions = [...w.deliveries.values()].map((x) => x.d);
  let status: DispatchStatus = 'dropped';
  if (decisions.some((d) => d.status === 'queued')) status = 'pending';
  else if (decisions.some((d) => d.status === 'deferred')) status = 'deferred';
  const details = decisions.length === 0
    ? { reason: 'no enabled tracker is linked to an enabled target for this event' }
    : status === 'dropped' ? { reason: (decisions[0] as { reason: string }).reason } : null;
  let deferred = false;
  await core.db.tx(async (q) => {
    await q.run(`INSERT INTO event_log (id, user_id, provider_id, provider_kind, event_type, severity, payload, extras, tracker_ids, dispatch_status, details, occurred_at, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [id, w.userId, w.providerId, w.providerKind, w.type, w.severity, w.payload, w.extras ?? null, w.trackerIds ?? null, status, details, w.occurredAt.toISOString(), now]);
    for (const [targetId, { d, trackerId }] of w.deliveries) {
      const did = newId();
      const dStatus = d.status;
      await q.run(`INSERT INTO deliveries (id, event_id, user_id, tracker_id, target_id, status, reason, attempts, next_attempt_at, created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
      [did, id, w.userId, trackerId, targetId, dStatus, d.status === 'dropped' ? d.reason : null, d.status === 'deferred' ? d.releaseAt.toISOString() : now, now, now]);
      if (d.status === 'deferred') {
        deferred = true;
        await q.run(`INSERT INTO deferred_dispatch (id, delivery_id, event_id, user_id, tracker_id, target_id, event_type, release_at, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, [newId(), did, id, w.userId, trackerId, targetId, w.type, d.releaseAt.toISOString(), now]);
      }
    }
  });
  core.metrics.eventLogTotal.inc({ status, event_type: w.type });
  return { eventIds: [id], queued: status === 'pending', deferredUsers: deferred ? [w.userId] : [] };
}
