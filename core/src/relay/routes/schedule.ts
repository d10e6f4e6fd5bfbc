/** Validation of action schedules: cron with 5 or 6 fields, a real time zone, at most once a minute. */
import { Cron } from 'croner';

const SAMPLE_RUNS = 10;

export type ScheduleCheck = { ok: true; nextRun: Date | null } | { ok: false; problem: string };

/**
 * Checks a cron expression in a time zone. Refuses malformed expressions, expressions that never
 * fire, and any schedule with two runs less than 60 seconds apart (sub-minute schedules).
 */
export function checkSchedule(expr: string, timezone: string, from: Date = new Date()): ScheduleCheck {
  const fields = expr.trim().split(/\s+/);
  if (!expr.startsWith('@') && fields.length !== 5 && fields.length !== 6) {
    return { ok: false, problem: `schedule "${expr}" must have 5 fields (minute hour day month weekday) or 6 (with seconds first)` };
  }
  let cron: Cron;
  try {
    cron = new Cron(expr.trim(), { timezone, paused: true, mode: '5-or-6-parts' });
  } catch (err) {
    return { ok: false, problem: `schedule "${expr}" is not a valid cron expression (${(err as Error).message.replace(/^CronPattern: /, '')})` };
  }
  try {
    // A seconds field that matches more than one second fires twice within some minute.
    if (fields.length === 6 && !/^\d{1,2}$/.test(fields[0]!)) {
      return { ok: false, problem: `schedule "${expr}" fires more often than once a minute; the seconds field must be a single number` };
    }
    const runs = cron.nextRuns(SAMPLE_RUNS, from);
    if (runs.length === 0) return { ok: false, problem: `schedule "${expr}" never fires` };
    for (let i = 1; i < runs.length; i++) {
      if (runs[i]!.getTime() - runs[i - 1]!.getTime() < 60_000) return { ok: false, problem: `schedule "${expr}" fires more often than once a minute` };
    }
    return { ok: true, nextRun: runs[0] ?? null };
  } finally {
    cron.stop();
  }
}
