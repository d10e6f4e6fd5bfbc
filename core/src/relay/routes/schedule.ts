/** Validation of action schedules: cron with 5 or 6 fields, a real time zone, at most once a minute. */
import { Cron } from 'croner';

const SAMPLE_RUNS = 10;

/**
 * Why a schedule is refused, as a stable code with its values, so a client can say it in the
 * user's language; `problem` is the English sentence (without the final full stop).
 */
export type ScheduleProblemCode =
  | 'schedule_field_count'
  | 'schedule_malformed'
  | 'schedule_sub_minute'
  | 'schedule_never_fires';
export type ScheduleCheck =
  | { ok: true; nextRun: Date | null }
  | { ok: false; problem: string; code: ScheduleProblemCode; params: Record<string, string | number> };

/** The cron object the runner and the preview both use, so both compute the same times. */
export function cronOf(expr: string, timezone: string): Cron {
  return new Cron(expr.trim(), { timezone, paused: true, mode: '5-or-6-parts' });
}

/**
 * Checks a cron expression in a time zone. Refuses malformed expressions, expressions that never
 * fire, and any schedule with two runs less than 60 seconds apart (sub-minute schedules).
 */
export function checkSchedule(expr: string, timezone: string, from: Date = new Date()): ScheduleCheck {
  const fields = expr.trim().split(/\s+/);
  const schedule = expr.trim();
  if (!expr.startsWith('@') && fields.length !== 5 && fields.length !== 6) {
    return {
      ok: false,
      code: 'schedule_field_count',
      params: { schedule, count: schedule ? fields.length : 0 },
      problem: `schedule "${expr}" must have 5 fields (minute hour day month weekday) or 6 (with seconds first)`,
    };
  }
  let cron: Cron;
  try {
    cron = cronOf(expr, timezone);
  } catch (err) {
    const reason = (err as Error).message.replace(/^CronPattern: /, '');
    return {
      ok: false,
      code: 'schedule_malformed',
      params: { schedule, reason },
      problem: `schedule "${expr}" is not a valid cron expression (${reason})`,
    };
  }
  try {
    // A seconds field that matches more than one second fires twice within some minute.
    if (fields.length === 6 && !/^\d{1,2}$/.test(fields[0]!)) {
      return {
        ok: false,
        code: 'schedule_sub_minute',
        params: { schedule },
        problem: `schedule "${expr}" fires more often than once a minute; the seconds field must be a single number`,
      };
    }
    const runs = cron.nextRuns(SAMPLE_RUNS, from);
    if (runs.length === 0)
      return {
        ok: false,
        code: 'schedule_never_fires',
        params: { schedule },
        problem: `schedule "${expr}" never fires`,
      };
    for (let i = 1; i < runs.length; i++) {
      if (runs[i]!.getTime() - runs[i - 1]!.getTime() < 60_000)
        return {
          ok: false,
          code: 'schedule_sub_minute',
          params: { schedule },
          problem: `schedule "${expr}" fires more often than once a minute`,
        };
    }
    return { ok: true, nextRun: runs[0] ?? null };
  } finally {
    cron.stop();
  }
}

/** The next `n` runs of a schedule already checked, after `from`. */
export function nextRuns(expr: string, timezone: string, from: Date, n: number): Date[] {
  const cron = cronOf(expr, timezone);
  try {
    return cron.nextRuns(n, from);
  } finally {
    cron.stop();
  }
}
