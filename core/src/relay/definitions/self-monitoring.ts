/**
 * Self-monitoring, defined once: the thresholds and tracking switches stored on each user's
 * self-monitoring provider (columns of `providers`). `GET, PATCH /api/self-monitoring` and the
 * provider's backup record derive from `SELF_MONITORING_SETTINGS`.
 */
import Type, { type Static } from 'typebox';
import { Database as Db } from '../../db/database.ts';
import { Uuid } from '../../http/schemas.ts';
import { optional } from './common.ts';

const Threshold = Type.Integer({ minimum: 1, maximum: 100_000 });

export const SELF_MONITORING_SETTINGS = {
  /** Failed polls of one tracker in a row before a signal. */
  poll_failure_threshold: Threshold,
  /** Deferred notifications waiting before a signal. */
  deferred_backlog_threshold: Threshold,
  /** Failed sends of one target in a row before a signal. */
  target_failure_threshold: Threshold,
  track_poll_failures: Type.Boolean(),
  track_deferred_backlog: Type.Boolean(),
  track_target_failures: Type.Boolean(),
};
export type SelfMonitoringSettings = {
  [K in keyof typeof SELF_MONITORING_SETTINGS]: Static<(typeof SELF_MONITORING_SETTINGS)[K]>;
};
const BOOLEANS = new Set<string>(['track_poll_failures', 'track_deferred_backlog', 'track_target_failures']);

/** A provider row's self-monitoring settings, read back. */
export function selfMonitoringSettingsOf(row: Record<string, unknown>): SelfMonitoringSettings {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(SELF_MONITORING_SETTINGS)) out[k] = BOOLEANS.has(k) ? Db.bool(row[k]) : Number(row[k]);
  return out as SelfMonitoringSettings;
}

/** The change body: any setting; what is left out keeps its value. */
export const SelfMonitoringPatchBody = Type.Object(optional(SELF_MONITORING_SETTINGS), { additionalProperties: false });

/** The caller's self-monitoring settings as the API shows them. */
export const SelfMonitoringView = Type.Object({
  provider_id: Uuid,
  ...SELF_MONITORING_SETTINGS,
  /** The deferred-backlog signal was sent and waits for the backlog to fall below the threshold again. */
  backlog_latched: Type.Boolean(),
});
