import Bree from 'bree';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../logging/logger.ts';
import type { Queryable } from '../db/database.ts';

const TICK_WORKER = fileURLToPath(new URL('./tick-worker.mjs', import.meta.url));

export interface JobSpec {
  /** Milliseconds between runs, or a bree/cron expression (`'every 1 day'`, `'0 3 * * *'`). */
  interval: number | string;
  run(signal: AbortSignal): Promise<void>;
  /** Only the elected replica runs it (default true). */
  leaderOnly?: boolean;
  /** Run once right after start. */
  runOnStart?: boolean;
}

/** Decides which replica runs leader-only work. SQLite: this process. PostgreSQL: an advisory lock. */
export interface LeaderElector {
  isLeader(): boolean;
  start(onChange: (leader: boolean) => void): Promise<void>;
  stop(): Promise<void>;
}

export class AlwaysLeader implements LeaderElector {
  isLeader() { return true; }
  async start(onChange: (leader: boolean) => void) { onChange(true); }
  async stop() {}
}

/**
 * bree owns the timing (a worker thread per tick that only signals), the core runs the job in-process.
 * A job never overlaps itself; a failing job is logged and retried on its next tick.
 */
export class Scheduler {
  private bree?: Bree;
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

  onLeadershipChange(fn: (leader: boolean) => void): void { this.leaderListeners.push(fn); }
  isLeader(): boolean { return this.elector.isLeader(); }

  async start(): Promise<void> {
    const jobs = [...this.jobs.entries()].map(([name, spec]) => ({
      name,
      path: TICK_WORKER,
      ...(typeof spec.interval === 'number' ? { interval: spec.interval } : /^[\d*]/.test(spec.interval) ? { cron: spec.interval } : { interval: spec.interval }),
    }));
    try {
      this.bree = new Bree({
        root: false,
        jobs,
        logger: false as never,
        workerMessageHandler: ({ name, message }: { name: string; message: unknown }) => {
          if (message && typeof message === 'object' && (message as { tick?: boolean }).tick) void this.runNow(name);
        },
        errorHandler: (err: unknown, meta: { name?: string }) => { this.log.error({ err, job: meta?.name }, 'job worker failed'); },
      });
      await this.bree.start();
      await this.elector.start((leader) => {
        this.log.info({ leader }, leader ? 'this replica leads the scheduler' : 'this replica no longer leads the scheduler');
        for (const fn of this.leaderListeners) fn(leader);
      });
      this.started = true;
      for (const [name, spec] of this.jobs) if (spec.runOnStart) void this.runNow(name);
    } catch (err) {
      this.failure = (err as Error).message;
      throw err;
    }
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
      } finally { this.running.delete(name); }
    })();
    this.running.set(name, p);
    return p;
  }

  status(): { state: 'ok' | 'fail'; leader: boolean; detail?: string } {
    if (!this.started || this.failure) return { state: 'fail', leader: false, detail: this.failure ?? 'scheduler not started' };
    return { state: 'ok', leader: this.elector.isLeader() };
  }

  async stop(): Promise<void> {
    this.abort.abort();
    if (this.bree) await this.bree.stop().catch(() => {});
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
  const n = await db.run('INSERT INTO job_runs (job, slot, replica, started_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING', [job, slot, replica, new Date().toISOString()]);
  return n > 0;
}
