/**
 * Quota days: calendar days in the configured IANA zone (UTC by default). The day key is the
 * local date `YYYY-MM-DD`; a day ends at the next local midnight, which is when counters reset.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

interface Local {
  y: number;
  m: number;
  d: number;
  h: number;
  min: number;
  s: number;
}

function local(at: Date, zone: string): Local {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(at)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { y: parts.year!, m: parts.month!, d: parts.day!, h: parts.hour! % 24, min: parts.minute!, s: parts.second! };
}

/** Milliseconds the zone is ahead of UTC at `at`. */
function offsetMs(at: Date, zone: string): number {
  const l = local(at, zone);
  const asUtc = Date.UTC(l.y, l.m - 1, l.d, l.h, l.min, l.s);
  return asUtc - Math.floor(at.getTime() / 1000) * 1000;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** The quota day `at` falls in, as `YYYY-MM-DD` in `zone`. */
export function dayKey(at: Date, zone: string): string {
  const l = local(at, zone);
  return `${pad(l.y, 4)}-${pad(l.m)}-${pad(l.d)}`;
}

/** The instant the day containing `at` ends in `zone` (the next local midnight). */
export function nextDayStart(at: Date, zone: string): Date {
  const l = local(at, zone);
  const target = Date.UTC(l.y, l.m - 1, l.d + 1);
  // Two passes settle the offset when a DST change lies between now and the boundary.
  let t = target - offsetMs(at, zone);
  t = target - offsetMs(new Date(t), zone);
  return new Date(t);
}
