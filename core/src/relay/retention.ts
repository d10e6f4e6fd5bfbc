/**
 * The event log's retention: finished events older than the period, with what hangs off them, deleted in short
 * paced batches so that the relay's own statements keep running beside it, and the daily job that runs it.
 */
import { purgeRevokedTokens } from '../auth/revocation.ts';
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { newId } from '../http/ids.ts';
import { claimSlot, finishSlot } from '../jobs/scheduler.ts';

/**
 * Rows deleted by the first statement of a retention run; the next ones are sized to take about RETENTION_BATCH_MS.
 * One statement for a year of a busy lab's events (half a million events, their deliveries and history by cascade)
 * held the database for 22 s: SQLite's single connection served nothing else, webhooks were refused as locked, and
 * deliveries whose settle could not be written were sent again (scripts/bench/RESULTS.md, issue 27 item 7).
 */
export const RETENTION_BATCH = 100;
/**
 * The longest one batch should hold the database and the event loop: the latency a webhook or a settle may wait
 * behind it. A writer of another connection that finds the lock held sleeps in SQLite's busy handler (1, 2, 5, 10 ms…
 * steps): at 10 ms a batch, half a million events pruned beside a paced relay held its p99 at 5.3×
 * (scripts/bench/RESULTS.md).
 */
export const RETENTION_BATCH_MS = 5;
/**
 * What a batch is sized to take, at the slowest rate of the last RATE_WINDOW batches: below RETENTION_BATCH_MS, so
 * that a batch slower than those does not overshoot it. Sized from the last batch alone, batches overshot their
 * 5 ms two to six times (the tail: p90 10.9 ms, max 28.6 ms).
 */
export const RETENTION_AIM_MS = 3;
/** How many of the last batches' time per row the next size is taken from (the slowest of them). */
export const RATE_WINDOW = 4;
/** A batch is at most this many times the last one's size (a rate measured on fewer rows is not trusted further). */
export const BATCH_GROWTH = 1.5;
/** Bounds of a batch's size, whatever its timing says. */
export const MIN_BATCH = 20;
export const MAX_BATCH = 2000;
/**
 * The least pause between two batches. Back to back, batches starve other writers: a process waiting for SQLite's
 * lock (the service, while the command line prunes) sleeps in steps of 1 to 25 ms and wakes to find the next batch
 * holding it, and in the process itself one turn of the event loop is less than a webhook's few statements need. A
 * pause twice as long as the batch took, and never under this, leaves the database idle two thirds of the time or more.
 */
export const RETENTION_PAUSE_MS = 25;

/**
 * A pause that ends more than this later than it asked means the event loop is busy: webhooks queued behind other
 * work, or a CPU the machine's other processes starve. An idle loop ends a timer within a millisecond or two.
 */
export const RETENTION_LATE_MS = 4;
/**
 * The most the pauses are lengthened while the event loop is late. The batches are not shrunk by it: a starved CPU
 * already slows the batches, and their size follows their timing. Shrinking them by the back-off as well (to 20 rows
 * at 4x) made a prune at a load average of 11 delete some 80 events a second: half an hour for half the bench's log.
 */
export const MAX_BACKOFF = 4;
/** Each pause that ends on time takes the back-off down by this factor: gradually, one on-time pause proves little. */
export const BACKOFF_RECOVERY = 0.8;
/** The longest pause between two batches, whatever the back-off: a prune always makes progress. */
export const MAX_PAUSE_MS = 400;

/**
 * Sizes the batches and their pauses from what the batches took, each timed as a whole: its select, and its
 * transaction from its start to the end of its COMMIT (what it held the event loop and the database for, the relay's
 * writes that commit with it included, not its wait in the queue of the group commit); and backs off while the
 * event loop is late, as the pauses measure it: each pause's actual length against the one asked.
 */
export class RetentionPacer {
  /** How much the pauses are lengthened: 1 on time, up to MAX_BACKOFF while the event loop is late. */
  backoff = 1;
  /** Rows the next batch deletes. */
  size = RETENTION_BATCH;
  /** The last batches' time per row, oldest first. */
  private rates: number[] = [];
  private lastMs = 0;

  /** A batch deleted `rows` rows in `ms`. */
  batchDone(rows: number, ms: number): void {
    this.lastMs = ms;
    this.rates.push(Math.max(ms, 0.05) / Math.max(rows, 1));
    if (this.rates.length > RATE_WINDOW) this.rates.shift();
    // The slowest recent rate: one slow batch shrinks the next at once; it grows again only once RATE_WINDOW faster
    // batches have followed.
    const fit = Math.floor(RETENTION_AIM_MS / Math.max(...this.rates));
    this.size = Math.min(MAX_BATCH, Math.max(MIN_BATCH, Math.min(fit, Math.floor(this.size * BATCH_GROWTH))));
  }

  /** The pause before the next batch: twice the batch, at least RETENTION_PAUSE_MS, lengthened by the back-off. */
  pauseMs(): number {
    const pause = Math.max(RETENTION_PAUSE_MS, Math.ceil(2 * this.lastMs));
    return Math.min(MAX_PAUSE_MS, Math.ceil(pause * this.backoff));
  }

  /** A pause asked for `askedMs` ended after `tookMs`: a late end doubles the back-off, an on-time one eases it. */
  pauseDone(askedMs: number, tookMs: number): void {
    this.backoff =
      tookMs - askedMs > RETENTION_LATE_MS
        ? Math.min(MAX_BACKOFF, this.backoff * 2)
        : Math.max(1, this.backoff * BACKOFF_RECOVERY);
  }
}

interface BatchOptions<R> {
  signal?: AbortSignal;
  /** Columns read with each row's id (read by the batch's own select: no second lookup). */
  columns?: string[];
  /** Runs in the batch's transaction before its rows are deleted (the replay keys' copy). */
  before?: (q: Queryable, rows: R[]) => Promise<unknown>;
  /** Called after each batch with the rows deleted so far. */
  onProgress?: (deleted: number) => void;
  /** Sizes the batches and the pauses (a test hands its own to watch it). */
  pacer?: RetentionPacer;
}

/**
 * Deletes the rows of `table` that match `where`, in batches of at most about RETENTION_BATCH_MS each with a pause
 * between, until none is left or `signal` aborts (what was deleted stays deleted; the rest goes on the next run).
 */
async function deleteInBatches<R extends { id: string }>(
  core: Core,
  table: string,
  where: string,
  params: string[],
  o: BatchOptions<R> = {},
): Promise<number> {
  let deleted = 0;
  const pacer = o.pacer ?? new RetentionPacer();
  const columns = ['id', ...(o.columns ?? [])].join(', ');
  while (!o.signal?.aborted) {
    const size = pacer.size;
    const selectFrom = performance.now();
    const rows = await core.db.all<R>(`SELECT ${columns} FROM ${table} WHERE ${where} LIMIT ${size}`, params);
    const selected = performance.now() - selectFrom;
    if (!rows.length) break;
    const ids = rows.map((r) => r.id);
    // Timed from inside the transaction to the end of its COMMIT: what the batch held the database and the event loop
    // for (the relay's writes in the same group commit included), not its wait for the connection (another
    // process's busy wait, or this connection's queue), which would shrink the batches for time they held nothing.
    let from = 0;
    deleted += await core.db.tx(async (q) => {
      from = performance.now();
      await o.before?.(q, rows);
      return q.run(`DELETE FROM ${table} WHERE id IN (${ids.map(() => '?').join(', ')})`, ids);
    });
    pacer.batchDone(rows.length, selected + performance.now() - from);
    o.onProgress?.(deleted);
    if (rows.length < size) break;
    const pause = pacer.pauseMs();
    const pauseFrom = performance.now();
    await new Promise((resolve) => setTimeout(resolve, pause));
    pacer.pauseDone(pause, performance.now() - pauseFrom);
  }
  return deleted;
}

export interface RetentionOptions {
  /** The cutoff instead of the retention period's: an operator's prune (`herald events prune --before`). */
  before?: Date;
  /** Called after each batch with the events deleted so far. */
  onProgress?: (deleted: number) => void;
  /** Sizes the event log's batches and pauses (a test hands its own to watch it). */
  pacer?: RetentionPacer;
}

/** The cleanup running in this process on a database, if any: the next one waits for it. */
const running = new WeakMap<object, Promise<unknown>>();

/**
 * Deletes event_log rows older than the retention period (0 keeps everything), or than `o.before` when given, with
 * what hangs off them, and whatever has expired whatever the period: sign-outs of tokens past their expiry, plugin
 * store entries. Returns the number of events deleted; stops between two batches when `signal` aborts. One cleanup
 * runs at a time in a process (the daily job and an operator's prune wait for each other), so that two of them never
 * double the time the database is held.
 */
export async function applyRetention(core: Core, signal?: AbortSignal, o: RetentionOptions = {}): Promise<number> {
  const previous = running.get(core.db) ?? Promise.resolve();
  // An abort ends the wait too: the scheduler's stop waits for the daily job, and a prune ahead of it is stopped only
  // later in the service's stop.
  const run = untilAborted(previous, signal).then(() => (signal?.aborted ? 0 : retentionRun(core, signal, o)));
  running.set(core.db, Promise.allSettled([previous, run]));
  return run;
}

/** Resolves when `p` settles or `signal` aborts, whichever comes first. */
function untilAborted(p: Promise<unknown>, signal?: AbortSignal): Promise<void> {
  if (!signal)
    return p.then(
      () => {},
      () => {},
    );
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    p.then(done, done);
  });
}

async function retentionRun(core: Core, signal: AbortSignal | undefined, o: RetentionOptions): Promise<number> {
  await purgeRevokedTokens(core.db, core.clock.now());
  const days = core.config.eventLogRetentionDays;
  if (!o.before && days <= 0) return 0;
  const now = core.clock.now().toISOString();
  const cutoff = (o.before ?? new Date(core.clock.now().getTime() - days * 86_400_000)).toISOString();
  const done = `created_at < ? AND dispatch_status IN ('dispatched', 'dropped', 'failed', 'partial')`;
  type Keyed = { id: string; provider_id: string | null; replay_key: string | null; replay_expires_at: string | null };
  const n = await deleteInBatches<Keyed>(core, 'event_log', done, [cutoff], {
    signal,
    onProgress: o.onProgress,
    pacer: o.pacer,
    columns: ['provider_id', 'replay_key', 'replay_expires_at'],
    // A replay key outlives its event when the period is shorter than the key's lifetime: it moves to plugin_store,
    // where the plugin's check still finds it, in the transaction that deletes its event. (Read with the batch: a
    // second select by id over the batch was planned on the replay index and read all of it, 0.5 s a batch.)
    before: async (q, rows) => {
      const live = rows.filter(
        (r) => r.provider_id && r.replay_key && r.replay_expires_at && r.replay_expires_at > now,
      );
      if (!live.length) return;
      await q.run(
        `INSERT INTO plugin_store (instance_id, key, value, expires_at)
        VALUES ${live.map(() => "(?, ?, '1', ?)").join(', ')} ON CONFLICT DO NOTHING`,
        live.flatMap((r) => [r.provider_id, r.replay_key, r.replay_expires_at]),
      );
    },
  });
  if (signal?.aborted) return n;
  await core.db.run('DELETE FROM webhook_payload_log WHERE received_at < ?', [cutoff]);
  await core.db.run('DELETE FROM plugin_store WHERE expires_at IS NOT NULL AND expires_at < ?', [now]);
  await core.db.run('DELETE FROM job_runs WHERE started_at < ?', [cutoff]);
  // Messages not followed up within the period are not edited any more (a later event posts anew).
  await core.db.run('DELETE FROM message_threads WHERE updated_at < ?', [cutoff]);
  return n;
}

export const RETENTION_JOB = 'event-log-retention';
/** The start's run waits this long: a service coming up first takes the backlog its stop left. */
export const RETENTION_START_DELAY_MS = 60_000;

/**
 * The daily job. At midnight it always runs; a minute after start only when no run with the same period completed
 * within the last day, so that restarting the service does not add a cleanup to every start (a changed period runs).
 * A completed run is recorded in job_runs, under a slot naming the period and the time.
 */
export async function retentionJob(core: Core, signal: AbortSignal, atStart: boolean): Promise<number | undefined> {
  const days = core.config.eventLogRetentionDays;
  const now = core.clock.now();
  if (atStart && days > 0) {
    const last = await core.db.get<{ finished_at: string | null }>(
      `SELECT MAX(finished_at) AS finished_at FROM job_runs WHERE job = ? AND slot LIKE ? AND outcome = 'ok'`,
      [RETENTION_JOB, `${days}d:%`],
    );
    if (last?.finished_at && now.getTime() - Date.parse(last.finished_at) < 86_400_000) return undefined;
  }
  const n = await applyRetention(core, signal);
  if (days > 0 && !signal.aborted) {
    const slot = `${days}d:${now.toISOString()}`;
    if (await claimSlot(core.db, RETENTION_JOB, slot, core.replicaId))
      await finishSlot(core.db, RETENTION_JOB, slot, 'ok', core.clock.now());
  }
  return n;
}

/** An operator's prune run by the service (`POST /api/admin/events/prune`), as `GET …/prune/{id}` shows it. */
export interface PruneJob {
  id: string;
  /** The cutoff: finished events created before it are deleted. */
  before: string;
  /** `stopped`: the service stopped before it finished (what was deleted stays deleted). */
  state: 'running' | 'done' | 'failed' | 'stopped';
  /** Events deleted so far. */
  deleted: number;
  /** When done: events older than the cutoff left because they are still pending or deferred. */
  kept_unfinished: number | null;
  started_at: string;
  finished_at: string | null;
  /** When failed: why, in English. */
  error: string | null;
}

/** Finished prunes a service remembers for `GET …/prune/{id}`, newest kept. */
const PRUNES_KEPT = 20;

interface Prunes {
  jobs: Map<string, PruneJob>;
  current?: { job: PruneJob; done: Promise<void> };
  abort: AbortController;
}
const prunesOf = new WeakMap<Core, Prunes>();

function prunes(core: Core): Prunes {
  const p = prunesOf.get(core);
  if (p) return p;
  const created: Prunes = { jobs: new Map(), abort: new AbortController() };
  prunesOf.set(core, created);
  // The service's stop ends a prune between two batches, before the database closes.
  core.onShutdown(async () => {
    created.abort.abort();
    await created.current?.done;
  });
  return created;
}

/**
 * Starts an operator's prune in this process: the same paced cleanup as the daily job (`applyRetention`), with the
 * operator's cutoff, in the background. Returns the prune started, or the one already running (`started: false`):
 * one at a time.
 */
export function startPrune(core: Core, before: Date): { job: PruneJob; started: boolean } {
  const p = prunes(core);
  if (p.current) return { job: { ...p.current.job }, started: false };
  const job: PruneJob = {
    id: newId(),
    before: before.toISOString(),
    state: 'running',
    deleted: 0,
    kept_unfinished: null,
    started_at: core.clock.now().toISOString(),
    finished_at: null,
    error: null,
  };
  p.jobs.set(job.id, job);
  for (const id of p.jobs.keys()) {
    if (p.jobs.size <= PRUNES_KEPT) break;
    if (id !== job.id) p.jobs.delete(id);
  }
  const log = core.logs.get('relay');
  const from = performance.now();
  const done = (async () => {
    try {
      job.deleted = await applyRetention(core, p.abort.signal, {
        before,
        onProgress: (n) => {
          job.deleted = n;
        },
      });
      if (p.abort.signal.aborted) job.state = 'stopped';
      else {
        const left = await core.db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM event_log WHERE created_at < ?', [
          job.before,
        ]);
        job.kept_unfinished = Number(left?.n ?? 0);
        job.state = 'done';
      }
    } catch (err) {
      job.state = p.abort.signal.aborted ? 'stopped' : 'failed';
      job.error = (err as Error).message;
    }
    job.finished_at = core.clock.now().toISOString();
    p.current = undefined;
    log.info(
      { prune_id: job.id, before: job.before, state: job.state, deleted: job.deleted, ms: performance.now() - from },
      'event log prune ended',
    );
  })();
  p.current = { job, done };
  return { job: { ...job }, started: true };
}

/** A prune this process ran or runs, by id; undefined when it knows none (another replica's, or before a restart). */
export function pruneJob(core: Core, id: string): PruneJob | undefined {
  const job = prunesOf.get(core)?.jobs.get(id);
  return job && { ...job };
}
