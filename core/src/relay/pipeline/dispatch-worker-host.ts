/**
 * The main thread's side of the dispatch thread (dispatch-worker.ts): starts it, restarts it
 * should it die, hands it the deliveries ingest wrote already claimed, and applies what it reports
 * (log lines, metrics, self-monitoring signals). Offers the same surface as the in-process
 * Dispatcher, so the relay, its jobs and its routes use either alike.
 */
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { type Core, wallClock } from '../../core.ts';
import { type LiveHint, liveOf } from '../../live/hints.ts';
import type { SelfMonitoringSignal, SelfMonitoringSignals } from '../../plugins/self-monitoring.ts';
import { LEASE_MS } from './dispatcher.ts';
import type { HandedDelivery } from './ingest.ts';

export interface MetricDelta {
  m: 'dispatchDuration' | 'sendFailures' | 'eventLogTotal' | 'pollFailures';
  labels: Record<string, string>;
  value: number;
}

export type ToWorker =
  | { t: 'handed'; handed: HandedDelivery[]; offset: number }
  | { t: 'wake'; offset: number }
  | { t: 'tick'; id: number; offset: number }
  | { t: 'release'; id: number; offset: number }
  | { t: 'stop'; id: number; now: boolean; pluginsMs: number }
  | { t: 'abort' }
  | { t: 'emitted'; id: number };

export type ToMain =
  | { t: 'ready' }
  | { t: 'open'; open: boolean }
  | { t: 'log'; line: string }
  | { t: 'metrics'; deltas: MetricDelta[]; commits: number }
  | { t: 'emitSelf'; id: number; userId: string; signal: SelfMonitoringSignal; payload: unknown }
  | { t: 'live'; hints: [string, LiveHint][] }
  | { t: 'done'; id: number; value?: unknown; error?: string };

/** What the relay needs of a dispatcher, in this thread or in the dispatch thread. */
export interface DispatchSide {
  wake(): void;
  handoffLease(): Date | undefined;
  accept(handed: HandedDelivery[]): void;
  start(): void;
  stop(grace?: AbortSignal): Promise<void>;
  tick(): Promise<void>;
  releaseDue(): Promise<number>;
}

/** A thread that dies is started again after this long (doubling up to a minute while it keeps dying at boot). */
const RESTART_MS = 500;
/** How long the service's start waits for the thread to take deliveries. */
const STARTED_WAIT_MS = 10_000;
/** After the grace period, how long the thread gets to give its rows back and stop its plugin instances. */
const STOP_AFTER_GRACE_MS = 1500;

type Emit = <S extends SelfMonitoringSignal>(
  userId: string,
  signal: S,
  payload: SelfMonitoringSignals[S],
) => Promise<unknown>;

export class DispatchThread implements DispatchSide {
  private core: Core;
  private emitSelf: Emit;
  private worker?: Worker;
  private ready = false;
  private open = false;
  private running = false;
  /** Handed-off deliveries not posted yet: posted at the end of this turn, or once a (re)starting thread is ready. */
  private pending: HandedDelivery[] = [];
  private flushing = false;
  private calls = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private whenReady: (() => void)[] = [];
  private restartMs = RESTART_MS;
  private restartTimer?: NodeJS.Timeout;
  private stopping?: Promise<void>;
  private dest: { write(s: string): unknown };
  /** Times the thread was started (tests: a restart after a crash). */
  starts = 0;

  constructor(core: Core, emitSelf: Emit) {
    this.core = core;
    this.emitSelf = emitSelf;
    const root = core.logs.root as unknown as Record<symbol, { write(s: string): unknown }>;
    this.dest = root[pino.symbols.streamSym] ?? process.stderr;
  }

  /**
   * The main clock, shared with the thread (see threadClock): tests move the main clock or stop it,
   * and the thread's clock follows. Written on every message, every handoff and, for a test's clock, every 20 ms.
   */
  private shared = new BigInt64Array(new SharedArrayBuffer(16));
  private clockTimer?: NodeJS.Timeout;
  private lastClock = Number.NaN;

  private offset(): number {
    const v = this.core.clock.now().getTime();
    const real = Date.now();
    let fixed = false;
    if (Math.abs(v - real) > 1) {
      // Not the wall clock (tests): is it stopped at a set time, or moving from an offset?
      if (v === this.lastClock) fixed = true;
      else {
        while (Date.now() === real) {
          /* at most 1 ms, and only when a test has just set its clock */
        }
        fixed = this.core.clock.now().getTime() === v;
      }
    }
    this.lastClock = v;
    Atomics.store(this.shared, 0, BigInt(fixed ? v : v - real));
    Atomics.store(this.shared, 1, fixed ? 1n : 0n);
    return v - real;
  }

  private post(m: ToWorker): void {
    this.worker?.postMessage(m);
  }

  /** Posts the handed-off deliveries waiting for the end of this turn now (what follows must come after them). */
  private flushHanded(): void {
    if (!this.ready || !this.pending.length) return;
    this.post({ t: 'handed', handed: this.pending.splice(0), offset: this.offset() });
  }

  private call(m: { t: 'tick' | 'release' }): Promise<unknown> {
    this.flushHanded();
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.calls.set(id, { resolve, reject });
      this.post({ ...m, id, offset: this.offset() });
    });
  }

  /**
   * Resolves when the thread has started and takes deliveries (or the dispatcher was stopped), or
   * after `timeoutMs` at most: the service does not wait on a thread slow to boot (ingest queues
   * the deliveries meanwhile, and the thread claims them once it runs).
   */
  async started(timeoutMs = STARTED_WAIT_MS): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((r) => {
      timer = setTimeout(() => r(false), timeoutMs);
    });
    const ok = await Promise.race([this.untilReady().then(() => true), late]);
    clearTimeout(timer);
    if (!ok)
      this.core.logs
        .get('relay')
        .warn(
          { waited_ms: timeoutMs },
          'the dispatch thread is not running yet; deliveries wait in the queue until it is',
        );
  }

  private async untilReady(): Promise<boolean> {
    if (this.ready) return true;
    if (!this.running) return false;
    await new Promise<void>((r) => this.whenReady.push(r));
    return this.ready;
  }

  private spawn(): void {
    this.starts++;
    const log = this.core.logs.get('relay');
    const w = new Worker(new URL('./dispatch-worker-entry.ts', import.meta.url), {
      workerData: { config: this.core.config, version: this.core.version, offset: this.offset(), clock: this.shared },
      // The thread's output goes through its log lines (posted here); nothing else should print.
      stdout: false,
      stderr: false,
    });
    this.worker = w;
    w.on('message', (m: ToMain) => this.onMessage(w, m));
    w.on('error', (err) => log.error({ err }, 'the dispatch thread failed'));
    w.on('exit', (code) => {
      if (this.worker !== w) return;
      this.worker = undefined;
      this.ready = false;
      this.open = false;
      for (const [, c] of this.calls) c.reject(new Error('the dispatch thread stopped'));
      this.calls.clear();
      if (!this.running) {
        this.flushWaiters();
        return;
      }
      // Died while it should run: its claimed rows come back when their leases run out; start it again.
      log.error({ exit_code: code, restart_in_ms: this.restartMs }, 'the dispatch thread exited; starting it again');
      this.restartTimer = setTimeout(() => {
        this.restartTimer = undefined;
        if (this.running) this.spawn();
      }, this.restartMs);
      this.restartMs = Math.min(60_000, this.restartMs * 2);
    });
  }

  private flushWaiters(): void {
    for (const r of this.whenReady.splice(0)) r();
  }

  private onMessage(w: Worker, m: ToMain): void {
    if (this.worker !== w) return;
    switch (m.t) {
      case 'ready': {
        this.ready = true;
        this.restartMs = RESTART_MS;
        this.flushHanded();
        this.flushWaiters();
        break;
      }
      case 'open':
        this.open = m.open;
        break;
      case 'log':
        this.dest.write(m.line);
        break;
      case 'metrics':
        this.applyMetrics(m.deltas, m.commits);
        break;
      case 'emitSelf':
        // Answered once the signal's event is written, so a pass of the thread that raised it ends after it.
        void this.emitSelf(m.userId, m.signal, m.payload as never)
          .catch((err) =>
            this.core.logs.get('relay').warn({ err }, 'raising a self-monitoring signal of the dispatch thread failed'),
          )
          .finally(() => {
            if (this.worker === w) w.postMessage({ t: 'emitted', id: m.id } satisfies ToWorker);
          });
        break;
      case 'live': {
        const live = liveOf(this.core.services);
        for (const [userId, hint] of m.hints) live.publish(userId, hint);
        break;
      }
      case 'done': {
        const c = this.calls.get(m.id);
        this.calls.delete(m.id);
        if (m.error !== undefined) c?.reject(new Error(m.error));
        else c?.resolve(m.value);
        break;
      }
    }
  }

  private applyMetrics(deltas: MetricDelta[], commits: number): void {
    const metrics = this.core.metrics;
    for (const d of deltas) {
      if (d.m === 'dispatchDuration') metrics.dispatchDuration.observe(d.labels as never, d.value);
      else (metrics[d.m] as { inc(l: Record<string, string>, v: number): void }).inc(d.labels, d.value);
    }
    // The WAL checkpointer watches the commits of every connection to the file.
    const native = (this.core.db as unknown as { native?: { onCommit?: () => void } }).native;
    if (native?.onCommit) for (let i = 0; i < commits; i++) native.onCommit();
  }

  wake(): void {
    if (this.ready) {
      this.flushHanded();
      this.post({ t: 'wake', offset: this.offset() });
    }
  }

  handoffLease(): Date | undefined {
    this.offset();
    if (!this.running || !this.ready || !this.open) return undefined;
    return new Date(this.core.clock.now().getTime() + LEASE_MS);
  }

  accept(handed: HandedDelivery[]): void {
    if (!this.running) {
      // Stopped between the lease and the commit: the rows go back to the queue for the next worker.
      const ids = handed.map((h) => h.row.id);
      void this.core.db
        .run(
          `UPDATE deliveries SET status = 'queued', lease_until = NULL, attempts = attempts - 1 WHERE ` +
            `status = 'sending' AND id IN (${ids.map(() => '?').join(',')})`,
          ids,
        )
        .catch((err) =>
          this.core.logs
            .get('relay')
            .warn({ err }, 'returning handed-off deliveries to the queue failed; their lease will run out'),
        );
      return;
    }
    // A thread restarting gets them once ready, within their lease. Otherwise they go in one
    // message with whatever else ingest hands off in this turn of the event loop (a message costs
    // more than the deliveries in it).
    this.pending.push(...handed);
    if (this.ready && !this.flushing) {
      this.flushing = true;
      setImmediate(() => {
        this.flushing = false;
        this.flushHanded();
      });
    }
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = undefined;
    this.offset();
    // The wall clock needs no refresh (its offset is 0); a test's, which it may move or stop, every 20 ms.
    if (this.core.clock !== wallClock) {
      this.clockTimer = setInterval(() => this.offset(), 20);
      this.clockTimer.unref();
    }
    if (!this.worker) this.spawn();
  }

  async stop(grace?: AbortSignal): Promise<void> {
    this.running = false;
    this.open = false;
    clearTimeout(this.restartTimer);
    clearInterval(this.clockTimer);
    this.flushWaiters();
    const w = this.worker;
    if (!w) {
      const handed = this.pending.splice(0);
      if (handed.length) this.accept(handed);
      return;
    }
    const now = !grace || grace.aborted;
    const onAbort = () => this.worker === w && w.postMessage({ t: 'abort' } satisfies ToWorker);
    grace?.addEventListener('abort', onAbort, { once: true });
    this.stopping ??= (async () => {
      const id = this.nextId++;
      const done = new Promise<unknown>((resolve, reject) => this.calls.set(id, { resolve, reject }));
      w.postMessage({ t: 'stop', id, now, pluginsMs: STOP_AFTER_GRACE_MS } satisfies ToWorker);
      // A thread that does not answer is ended anyway, shortly after the grace period.
      const late = new Promise<void>((resolve) => {
        const arm = () => setTimeout(() => resolve(), STOP_AFTER_GRACE_MS + 1000).unref();
        if (now) arm();
        else grace!.addEventListener('abort', arm, { once: true });
      });
      await Promise.race([done, late]).catch((err) =>
        this.core.logs.get('relay').warn({ err }, 'the dispatch thread did not stop cleanly'),
      );
      grace?.removeEventListener('abort', onAbort);
      const handed = this.pending.splice(0);
      if (handed.length) this.accept(handed);
      await w.terminate();
    })();
    if (now) w.postMessage({ t: 'abort' } satisfies ToWorker);
    await this.stopping;
  }

  async tick(): Promise<void> {
    if (!(await this.untilReady())) return;
    await this.call({ t: 'tick' });
  }

  async releaseDue(): Promise<number> {
    if (!(await this.untilReady())) return 0;
    return Number(await this.call({ t: 'release' }));
  }

  /** Tests: ends the thread at once, as a crash would. */
  async crash(): Promise<void> {
    await this.worker?.terminate();
  }
}
