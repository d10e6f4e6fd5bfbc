/**
 * `GET /api/stats`: what the overview's charts draw, from the caller's own rows only. Events per day of the last 30
 * days (in the caller's time zone) by dispatch status, and per target the delivery success rate, the p95 delivery
 * latency and the failures. The SQL is plain aggregation that reads the same on SQLite and PostgreSQL; days in a
 * time zone and the percentile are worked out here, since the two databases have no common date or percentile
 * functions.
 */

import Type from 'typebox';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { unprocessable } from '../../http/problem.ts';
import { ok } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import { zonedToUtc } from '../quiet-hours/quiet-hours.ts';
import { validTimeZone } from './common.ts';

/** How many days the charts cover, today included. */
export const STATS_DAYS = 30;

const Query = Type.Object(
  {
    tz: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'An IANA time zone (Europe/Berlin) that days are counted in; UTC by default.',
      }),
    ),
  },
  { additionalProperties: false },
);

const Counts = Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
  description: 'Events per dispatch status (`dispatched`, `failed`, `partial`, `deferred`…); absent: none.',
});
export const StatsAnswer = Type.Object({
  tz: Type.String({ description: 'The time zone the days are in.' }),
  since: Type.String({ format: 'date-time', description: 'The start of the first day, as an instant (UTC).' }),
  statuses: Type.Array(Type.String(), { description: 'Every dispatch status that occurs in `days`, sorted.' }),
  days: Type.Array(
    Type.Object({
      date: Type.String({ description: 'The day in the time zone (YYYY-MM-DD).' }),
      total: Type.Integer({ minimum: 0 }),
      counts: Counts,
    }),
    { description: `The last ${STATS_DAYS} days, oldest first, today last; days without events count zero.` },
  ),
  targets: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      kind: Type.String(),
      sent: Type.Integer({ minimum: 0, description: 'Deliveries sent.' }),
      failed: Type.Integer({ minimum: 0, description: 'Deliveries that failed for good.' }),
      success_rate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
        description: 'sent / (sent + failed); null when none has settled.',
      }),
      p95_ms: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
        description:
          'The 95th percentile (nearest rank) of the time from a delivery being queued to it being sent, in ' +
          'milliseconds; null when none was sent.',
      }),
    }),
    { description: 'Every target of yours, most failures first, then by name.' },
  ),
});

/** `YYYY-MM-DD` of an instant in a zone. */
function dayKeyer(timeZone: string): (d: Date) => string {
  const f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  return (d) => {
    const p: Record<string, string> = {};
    for (const x of f.formatToParts(d)) p[x.type] = x.value;
    return `${p.year}-${p.month}-${p.day}`;
  };
}

/** The nearest-rank percentile `q` (0–1) of ascending `sorted`. */
export function percentile(sorted: number[], q: number): number | null {
  if (!sorted.length) return null;
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

export async function statsRoutes(app: App, core: Core): Promise<void> {
  app.get(
    '/api/stats',
    {
      schema: {
        tags: ['relay'],
        summary: 'Your events per day and your targets’ delivery figures, for the overview’s charts',
        description:
          `For the last ${STATS_DAYS} days (today included) in the time zone \`tz\` (an IANA name, UTC by ` +
          'default): your events per day by dispatch status (counted on the day Herald received them), and per ' +
          'target of yours the deliveries sent and failed in that time, the success rate (sent out of sent and ' +
          'failed) and the p95 delivery latency (queued to sent). Only your own events, deliveries and targets ' +
          'count. 422 `invalid_timezone` for a zone that is not an IANA name.',
        querystring: Query,
        response: {
          ...ok('Events per day by status, and per target its success rate, p95 latency and failures.', StatsAnswer),
        },
      },
      preHandler: requireUser(core),
    },
    async (req) => {
      const user = caller(req);
      const tz = req.query.tz ?? 'UTC';
      if (!validTimeZone(tz)) {
        throw unprocessable(
          `tz "${tz}" is not an IANA time zone (for example Europe/Berlin or UTC).`,
          [{ path: 'querystring/tz', message: 'is not an IANA time zone' }],
          'invalid_timezone',
          { timezone: tz },
        );
      }
      const keyOf = dayKeyer(tz);
      // The first day: today's date in the zone, 29 calendar days back, from its local midnight.
      const [y, m, d] = keyOf(core.clock.now()).split('-').map(Number) as [number, number, number];
      const dates: string[] = [];
      for (let i = STATS_DAYS - 1; i >= 0; i--)
        dates.push(new Date(Date.UTC(y, m - 1, d - i)).toISOString().slice(0, 10));
      const [fy, fm, fd] = dates[0]!.split('-').map(Number) as [number, number, number];
      const since = zonedToUtc(fy, fm, fd, 0, 0, tz).toISOString();

      // Counted per minute (ISO text is ordered and cut alike on both databases); a minute lies in one day in any
      // zone, whose offsets are whole minutes.
      const perMinute = await core.db.all<{ minute: string; status: string; n: number | string }>(
        'SELECT substr(created_at, 1, 16) AS minute, dispatch_status AS status, COUNT(*) AS n FROM event_log ' +
          'WHERE user_id = ? AND created_at >= ? GROUP BY substr(created_at, 1, 16), dispatch_status',
        [user.id, since],
      );
      const byDay = new Map(dates.map((k) => [k, { date: k, total: 0, counts: {} as Record<string, number> }]));
      const statuses = new Set<string>();
      for (const r of perMinute) {
        const day = byDay.get(keyOf(new Date(`${r.minute}:00Z`)));
        if (!day) continue;
        const n = Number(r.n);
        day.counts[r.status] = (day.counts[r.status] ?? 0) + n;
        day.total += n;
        statuses.add(r.status);
      }

      const targets = await core.db.all<{ id: string; name: string; kind: string }>(
        'SELECT id, name, kind FROM targets WHERE user_id = ? ORDER BY name, id',
        [user.id],
      );
      const settled = await core.db.all<{ target_id: string; status: string; n: number | string }>(
        'SELECT d.target_id, d.status, COUNT(*) AS n FROM deliveries d JOIN event_log e ON e.id = d.event_id ' +
          "WHERE e.user_id = ? AND d.user_id = ? AND d.created_at >= ? AND d.status IN ('sent', 'failed') " +
          'GROUP BY d.target_id, d.status',
        [user.id, user.id, since],
      );
      const sentRows = await core.db.all<{ target_id: string; created_at: string; sent_at: string }>(
        'SELECT d.target_id, d.created_at, d.sent_at FROM deliveries d JOIN event_log e ON e.id = d.event_id ' +
          "WHERE e.user_id = ? AND d.user_id = ? AND d.created_at >= ? AND d.status = 'sent' AND d.sent_at IS NOT NULL",
        [user.id, user.id, since],
      );
      const latencies = new Map<string, number[]>();
      for (const r of sentRows) {
        const ms = Date.parse(r.sent_at) - Date.parse(r.created_at);
        if (!Number.isFinite(ms)) continue;
        const list = latencies.get(r.target_id) ?? [];
        list.push(Math.max(0, ms));
        latencies.set(r.target_id, list);
      }
      const count = (id: string, status: string) =>
        Number(settled.find((r) => r.target_id === id && r.status === status)?.n ?? 0);
      const perTarget = targets.map((t) => {
        const sent = count(t.id, 'sent');
        const failed = count(t.id, 'failed');
        return {
          id: t.id,
          name: t.name,
          kind: t.kind,
          sent,
          failed,
          success_rate: sent + failed ? sent / (sent + failed) : null,
          p95_ms: percentile(
            (latencies.get(t.id) ?? []).sort((a, b) => a - b),
            0.95,
          ),
        };
      });
      perTarget.sort((a, b) => b.failed - a.failed);
      return { tz, since, statuses: [...statuses].sort(), days: [...byDay.values()], targets: perTarget };
    },
  );
}
