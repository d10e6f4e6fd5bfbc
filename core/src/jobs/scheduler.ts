import type { Cron } from 'croner';
import type { Queryable } from '../db/database.ts';
import type { Logger } from '../logging/logger.ts';

export interface JobSpec {
  /**
   * Milliseconds between runs (the first one interval after start), a five-field cron expression in
   * the process's time zone (`'0 3 * * *'`), or `'every <n> minutes|hours'`, `'every day'` /
   * `'every 1 day'` (at local midnight), as bree's text schedules read them.
   */
  interval: number | string;
  run(signal: AbortSignal): Promise<void>;
  /** Only the elected replica runs it (default true). */
  leaderOnly?: boolean;
  /** Run once right after start (or `startDelayMs` after it). */
  runOnStart?: boolean;
  /** With runOnStart: how long after start that run waits, so that it stays off the boot's path (default 0). */
  startDelayMs?: number;
}

/** Decides which replica runs leader-only work. SQLite: this process. PostgreSQL: an advisory lock. */
export interface LeaderElector {
  isLeader(): boolean;
  start(onChange: (leader: boolean) => void): Promise<void>;
  stop(): Promise<void>;
}

export class AlwaysLeader implements LeaderElector {
  isLeader() {
    return true;
  }
  async start(onChange: (leader: boolean) => void) {
    onChange(true);
  }
  async stop() {}
}

/**
 * The cron expression of a text schedule (what bree read with later's text parser: `every 1 day` is
 * every day at local midnight, `every 15 minutes` each minute divisible by 15), the expression
 * itself when it is cron already, undefined when it is neither.
 */
export function cronOfSchedule(text: string): string | undefined {
  const t = text.trim();
  if (/^[\d*]/.test(t)) return t;
  const m = /^every\s+(?:(\d+)\s+)?(minute|hour|day)s?$/i.exec(t);
  if (!m) return undefined;
  const n = m[1] === undefined ? 1 : Number(m[1]);
  const unit = m[2]!.toLowerCase();
  if (unit === 'day') return n === 1 ? '0 0 * * *' : undefined;
  if (n < 1 || n > (unit === 'minute' ? 59 : 23)) return undefined;
  const step = n === 1 ? '*' : `*/${n}`;
  return unit === 'minute' ? `${step} * * * *` : `0 ${step} * * *`;
}

/**
 * Runs the registered jobs on their schedules, in this process (where the database connection, the
 * plugin instances and the leader lease live): a timer for intervals, croner for the others. A job
 * never overlaps itself; a failing job is logged and retried on its next tick. (bree did the timing
 * until issue 27: a worker thread started on every tick only to signal, every 30 s on an idle
 * service, and bree with its parsers cost ~3 MB resident.)
 */
export class Scheduler {
  private timers: { stop(): void }[] = [];
  private jobs = new Map<string, JobSpec>();
  private running = new Map<string, Promise<void>>();
  private abort = new AbortController();
  private log: Logger;
  private elector: LeaderElector;
  private leaderListeners: ((leader: boolean) => void)[] = [];
  private started = false;
  private failure?: string;
  readonly lastRuns = new Map<string, { at: Date; ok: boolean; error?: string }>();

  constructor(log: Logger, elector: LeaderElector = new AlwaysLeader()) {
    this.log = log;
    this.elector = elector;
  }

  register(name: string, spec: JobSpec): void {
    if (this.started) throw new Error(`job ${name} registered after the scheduler started`);
    this.jobs.set(name, spec);
  }

  onLeadershipChange(fn: (leader: boolean) => void): void {
    this.leaderListeners.push(fn);
  }
  isLeader(): boolean {
    return this.elector.isLeader();
  }

  async start(): Promise<void> {
    try {
      const schedules = [...this.jobs].map(([name, spec]) => {
        if (typeof spec.interval === 'number') {
          if (!Number.isFinite(spec.interval) || spec.interval <= 0)
            throw new Error(
              `job ${name}: the interval must be a positive number of milliseconds, got ${spec.interval}`,
            );
          return { name, ms: spec.interval };
        }
        const cron = cronOfSchedule(spec.interval);
        if (!cron)
          throw new Error(
            `job ${name}: "${spec.interval}" is not a schedule (a cron expression, or every <n> minutes, ` +
              'hours or every day)',
          );
        return { name, cron };
      });
      // croner only when a job has a schedule that is not a plain interval.
      const CronClass = schedules.some((s) => s.cron) ? (await import('croner')).Cron : undefined;
      for (const s of schedules) {
        if (s.ms !== undefined) {
          const t = setInterval(() => {
            void this.runNow(s.name);
          }, s.ms);
          t.unref();
          this.timers.push({ stop: () => clearInterval(t) });
        } else {
          const c: Cron = new CronClass!(s.cron!, { unref: true }, () => {
            void this.runNow(s.name);
          });
          this.timers.push({ stop: () => c.stop() });
        }
      }
      await this.elector.start((leader) => {
        this.log.info(
          { leader },
          leader ? 'this replica leads the scheduler' : 'this replica no longer leads the scheduler',
        );
        for (const fn of this.leaderListeners) fn(leader);
      });
      this.started = true;
      for (const [name, spec] of this.jobs) {
        if (!spec.runOnStart) continue;
        if (!spec.startDelayMs) {
          void this.runNow(name);
          continue;
        }
        const t = setTimeout(() => {
          void this.runNow(name);
        }, spec.startDelayMs);
        t.unref();
        this.timers.push({ stop: () => clearTimeout(t) });
      }
    } catch (err) {
      this.stopTimers();
      this.failure = (err as Error).message;
      throw err;
    }
  }

  private stopTimers(): void {
    for (const t of this.timers) t.stop();
    this.timers = [];
  }

  /** Runs a job now (unless it is already running or leader-only on a follower). Resolves when it finishes. */
  async runNow(name: string): Promise<void> {
    const spec = this.jobs.get(name);
    if (!spec) throw new Error(`unknown job ${name}`);
    if ((spec.leaderOnly ?? true) && !this.elector.isLeader()) return;
    const existing = this.running.get(name);
    if (existing) return existing;
    const p = (async () => {
      try {
        await spec.run(this.abort.signal);
        this.lastRuns.set(name, { at: new Date(), ok: true });
      } catch (err) {
        this.lastRuns.set(name, { at: new Date(), ok: false, error: (err as Error).message });
        this.log.error({ err, job: name }, 'job failed');
      } finally {
        this.running.delete(name);
      }
    })();
    this.running.set(name, p);
    return p;
  }

  status(): { state: 'ok' | 'fail'; leader: boolean; detail?: string } {
    if (!this.started || this.failure)
      return { state: 'fail', leader: false, detail: this.failure ?? 'scheduler not started' };
    return { state: 'ok', leader: this.elector.isLeader() };
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.stopTimers();
    await Promise.allSettled([...this.running.values()]);
    await this.elector.stop();
    this.started = false;
  }
}

/**
 * Claims a time slot of a job across replicas: true for exactly one caller per (job, slot).
 * Scheduled work that must run once per slot (backups, actions, retention) claims its slot first.
 */
export async function claimSlot(db: Queryable, job: string, slot: string, replica: string): Promise<boolean> {
  const n = await db.run(
    'INSERT INTO job_runs (job, slot, replica, started_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    [job, slot, replica, new Date().toISOString()],
  );
  return n > 0;
}

/**
 * Records how a claimed slot ended: its finish time and outcome ('ok' or 'failed'). `at` defaults to the wall clock;
 * a job that reads time from the core's clock passes its own.
 */
export async function finishSlot(
  db: Queryable,
  job: string,
  slot: string,
  outcome: 'ok' | 'failed',
  at: Date = new Date(),
): Promise<void> {
  await db.run('UPDATE job_runs SET finished_at = ?, outcome = ? WHERE job = ? AND slot = ?', [
    at.toISOString(),
    outcome,
    job,
    slot,
  ]);
}
