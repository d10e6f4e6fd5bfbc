import type { Core } from '../../core.ts';
import type { Severity } from '../../plugin-api/index.ts';
import { writeEvent } from '../pipeline/ingest.ts';
import { relayIfRunning } from '../routes/common.ts';

/**
 * An event no provider raised (an action's digest, a notification the assistant sent with the
 * user's consent): written to the event log under `source` with one queued delivery per target,
 * then sent by the dispatcher through the normal pipeline, rendered per target in its language.
 */
export async function emitOwn(
  core: Core,
  e: {
    userId: string;
    source: string;
    type: string;
    severity?: Severity;
    payload: Record<string, unknown>;
    targetIds: string[];
  },
): Promise<string> {
  const deliveries = new Map(e.targetIds.map((id) => [id, { d: { status: 'queued' as const }, trackerId: null }]));
  const r = await writeEvent(core, {
    userId: e.userId,
    providerId: null,
    providerKind: e.source,
    type: e.type,
    severity: e.severity ?? 'info',
    payload: e.payload,
    occurredAt: core.clock.now(),
    deliveries,
  });
  if (r.queued) relayIfRunning(core)?.dispatcher.wake();
  return r.eventIds[0]!;
}
