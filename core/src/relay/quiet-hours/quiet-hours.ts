/** A daily quiet window in local wall-clock time; `start` > `end` crosses midnight. */
export interface QuietWindow {
  start: string;
  end: string;
  timezone: string;
}

const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Why a window is invalid, or undefined. */
export function quietWindowProblem(w: QuietWindow): string | undefined {
  if (!HHMM.test(w.start)) return `quiet_hours.start "${w.start}" must be HH:MM (00:00-23:59)`;
  if (!HHMM.test(w.end)) return `quiet_hours.end "${w.end}" must be HH:MM (00:00-23:59)`;
  if (w.start === w.end) return 'quiet_hours.start and quiet_hours.end must differ';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: w.timezone });
  } catch {
    return `quiet_hours.timezone "${w.timezone}" is not an IANA time zone`;
  }
  return undefined;
}

const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

const formatters = new Map<string, Intl.DateTimeFormat>();
function parts(at: Date, timeZone: string): { y: number; mo: number; d: number; h: number; mi: number; s: number } {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  const o: Record<string, number> = {};
  for (const p of f.formatToParts(at)) if (p.type !== 'literal') o[p.type] = Number(p.value);
  return { y: o.year!, mo: o.month!, d: o.day!, h: o.hour!, mi: o.minute!, s: o.second! };
}

/** UTC offset of a zone at an instant, in minutes. */
function offsetMinutes(at: Date, timeZone: string): number {
  const p = parts(at, timeZone);
  const asUtc = Date.UTC(p.y, p.mo - 1, p.d, p.h, p.mi, p.s);
  return Math.round((asUtc - Math.floor(at.getTime() / 1000) * 1000) / 60000);
}

/** The instant a local wall-clock time happens in a zone (for a skipped DST time: the instant just after the gap). */
export function zonedToUtc(y: number, mo: number, d: number, h: number, mi: number, timeZone: string): Date {
  const guess = Date.UTC(y, mo - 1, d, h, mi);
  let t = guess - offsetMinutes(new Date(guess), timeZone) * 60000;
  t = guess - offsetMinutes(new Date(t), timeZone) * 60000;
  return new Date(t);
}

/** Whether `at` falls inside the window (start inclusive, end exclusive). */
export function isQuiet(w: QuietWindow, at: Date): boolean {
  const p = parts(at, w.timezone);
  const now = p.h * 60 + p.mi;
  const s = minutes(w.start),
    e = minutes(w.end);
  return s < e ? now >= s && now < e : now >= s || now < e;
}

/** The instant the window that contains `at` ends (the next local `end` time after `at`). */
export function quietEnd(w: QuietWindow, at: Date): Date {
  const p = parts(at, w.timezone);
  const e = minutes(w.end);
  const [eh, em] = [Math.floor(e / 60), e % 60];
  let end = zonedToUtc(p.y, p.mo, p.d, eh, em, w.timezone);
  if (end.getTime() <= at.getTime()) {
    const next = new Date(Date.UTC(p.y, p.mo - 1, p.d + 1));
    end = zonedToUtc(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), eh, em, w.timezone);
  }
  return end;
}
