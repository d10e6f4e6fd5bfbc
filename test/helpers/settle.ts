/**
 * What a test waits on before it asserts that nothing (more) arrived somewhere: proof that the
 * pipeline has settled, rather than a sleep a late duplicate could outlast.
 */
import type { TestService } from './service.ts';

/** Delivery statuses from which a send can still happen. */
const OPEN = ['queued', 'sending', 'in_digest'];

export interface SettledDelivery {
  id: string;
  event_id: string;
  target_id: string;
  status: string;
  attempts: number;
}

/**
 * Waits until no delivery of the given events (of every event when none are named) can still be
 * sent (none is queued, sending or waiting in a digest, no event is still pending), then lets the
 * dispatcher finish and record whatever it has in flight and checks again. A delivery is marked
 * sent only after the channel answered, so by then every request it made has reached its
 * receiver. Returns the deliveries; throws after `ms` with the ones still open.
 */
export async function settled(s: TestService, eventIds?: string[], ms = 10_000): Promise<SettledDelivery[]> {
  const db = s.service.core.db;
  const relay = s.service.core.services.get('relay') as { tick(): Promise<void> };
  const where = eventIds ? `WHERE event_id IN (${eventIds.map(() => '?').join(',')})` : '';
  const read = async () => {
    const deliveries = (
      await db.all(
        `SELECT id, event_id, target_id, status, attempts FROM deliveries ${where} ORDER BY id`,
        eventIds ?? [],
      )
    ).map((r) => ({
      id: String(r.id),
      event_id: String(r.event_id),
      target_id: String(r.target_id),
      status: String(r.status),
      attempts: Number(r.attempts),
    }));
    const pending = await db.all(
      `SELECT id FROM event_log ${eventIds ? `WHERE id IN (${eventIds.map(() => '?').join(',')}) AND` : 'WHERE'} ` +
        `dispatch_status = 'pending'`,
      eventIds ?? [],
    );
    return { deliveries, open: deliveries.filter((d) => OPEN.includes(d.status)), pending: pending.length };
  };
  const end = Date.now() + ms;
  for (;;) {
    let r = await read();
    if (r.open.length === 0 && r.pending === 0) {
      await relay.tick();
      r = await read();
      if (r.open.length === 0 && r.pending === 0) return r.deliveries;
    }
    if (Date.now() > end)
      throw new Error(
        `the pipeline did not settle in ${ms} ms: ` +
          `${r.open.map((d) => `${d.id} ${d.status}`).join(', ') || `${r.pending} event(s) pending`}`,
      );
    await new Promise((res) => setTimeout(res, 20));
  }
}
