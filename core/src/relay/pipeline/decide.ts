import type { EventSpec, QuietHoursPolicy, Severity } from '../../plugin-api/index.ts';
import { isQuiet, type QuietWindow, quietEnd } from '../quiet-hours/quiet-hours.ts';
import type { DispatchStatus } from '../vocabulary.ts';

export interface TrackerRules {
  id: string;
  event_types: Record<string, boolean>;
  quiet_hours: QuietWindow | null;
  quiet_policies: Record<string, QuietHoursPolicy>;
}

export type Decision =
  | { status: 'queued' }
  | { status: 'deferred'; releaseAt: Date }
  | { status: 'dropped'; reason: string };

/**
 * What happens to one event for one tracker, in the order of the specification:
 * a disabled type is dropped (wins over deferral); in quiet hours the type's policy applies
 * (the tracker may override the plugin's); otherwise it is sent. A critical event bypasses quiet
 * hours unless the tracker names its own policy for the type.
 */
export function decide(
  tracker: TrackerRules,
  type: string,
  spec: Pick<EventSpec, 'quietHours'> | undefined,
  at: Date,
  severity?: Severity,
): Decision {
  if (tracker.event_types[type] === false)
    return { status: 'dropped', reason: `event type ${type} is disabled on this tracker` };
  const w = tracker.quiet_hours;
  if (w && isQuiet(w, at)) {
    const policy =
      tracker.quiet_policies[type] ?? (severity === 'critical' ? 'send' : undefined) ?? spec?.quietHours ?? 'defer';
    if (policy === 'defer') return { status: 'deferred', releaseAt: quietEnd(w, at) };
    if (policy === 'drop')
      return {
        status: 'dropped',
        reason: `quiet hours (${w.start}-${w.end} ${w.timezone}): ${type} is dropped when stale`,
      };
  }
  return { status: 'queued' };
}

const RANK = { queued: 3, deferred: 2, dropped: 1 } as const;
/** A target linked through several trackers gets one delivery: the most eager decision wins. */
export function merge(a: Decision | undefined, b: Decision): Decision {
  if (!a) return b;
  if (RANK[b.status] !== RANK[a.status]) return RANK[b.status] > RANK[a.status] ? b : a;
  if (a.status === 'deferred' && b.status === 'deferred') return a.releaseAt <= b.releaseAt ? a : b;
  return a;
}

export type { DispatchStatus };

/** The event's dispatch_status from its deliveries' statuses. */
export function eventStatus(statuses: string[]): DispatchStatus {
  if (statuses.length === 0) return 'dropped';
  // `in_digest`: waiting for the quiet-hours digest it went into to be sent.
  if (statuses.some((s) => s === 'queued' || s === 'sending' || s === 'in_digest')) return 'pending';
  if (statuses.some((s) => s === 'deferred')) return 'deferred';
  const sent = statuses.filter((s) => s === 'sent').length;
  const failed = statuses.filter((s) => s === 'failed').length;
  if (sent && failed) return 'partial';
  if (sent) return 'dispatched';
  if (failed) return 'failed';
  return 'dropped';
}
