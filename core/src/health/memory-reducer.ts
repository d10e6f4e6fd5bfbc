/**
 * Idle memory reducer, like the one browsers run on background tabs. During boot V8 grows the
 * young generation (and some old-space pages) far beyond what the idle service keeps alive, and
 * an idle process never allocates enough to trigger the collection that would give it back. Once
 * the service has been idle for a while and the heap has clearly more committed than used, one
 * memory-reducing full collection returns the slack to the OS (~100 ms of pause, nobody waiting).
 */

import { type EventLoopUtilization, performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Logger } from '../logging/logger.ts';

/** V8's `gc` function as exposed by `--expose-gc`; the options object selects a memory-reducing collection. */
export type GcFunction = (options?: {
  type?: 'major' | 'minor';
  execution?: 'sync' | 'async';
  flavor?: 'regular' | 'last-resort';
}) => unknown;

export interface MemoryReducerOptions {
  log: Logger;
  /** How long the service must stay idle before the collection; default 5 s. */
  idleMs?: number;
  /** Never collect more often than this; default 30 s. */
  minIntervalMs?: number;
  /** Collect only when committed heap exceeds used heap by more than this; default 16 MB. */
  minSlackBytes?: number;
  /** Event-loop utilisation above which a check interval counts as activity; default 5 %. */
  maxUtilization?: number;
  /** The collector; by default obtained from V8 on first use. `null` disables the reducer. */
  gc?: GcFunction | null;
}

const MB = 1024 * 1024;
const mb = (bytes: number) => Math.round((bytes / MB) * 10) / 10;

/**
 * V8's `gc` without starting Node with `--expose-gc`: the flag is switched on just long enough to
 * create one context that carries the function, then off again. Undefined if V8 refuses.
 */
export function obtainGc(): GcFunction | undefined {
  const existing = (globalThis as { gc?: unknown }).gc;
  if (typeof existing === 'function') return existing as GcFunction;
  try {
    v8.setFlagsFromString('--expose-gc');
    const fn: unknown = vm.runInNewContext('typeof gc === "function" ? gc : undefined');
    return typeof fn === 'function' ? (fn as GcFunction) : undefined;
  } catch {
    return undefined;
  } finally {
    try {
      v8.setFlagsFromString('--no-expose-gc');
    } catch {
      /* the flag stays; harmless */
    }
  }
}

/** The idle delay from `HERALD_MEMORY_REDUCER_IDLE_MS` (tests and operators); `0` or `off` disables the reducer. */
export function idleDelayFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env.HERALD_MEMORY_REDUCER_IDLE_MS?.trim();
  if (raw === undefined || raw === '') return 5_000;
  if (raw === 'off') return undefined;
  const n = Number(raw);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/** Watches for idleness and runs one memory-reducing collection per idle period. */
export class MemoryReducer {
  /** Collections run so far. */
  runs = 0;
  private readonly log: Logger;
  private readonly idleMs: number;
  private readonly minIntervalMs: number;
  private readonly minSlackBytes: number;
  private readonly maxUtilization: number;
  private gc: GcFunction | null | undefined;
  private timer: NodeJS.Timeout | undefined;
  private activity = 0;
  private seenActivity = 0;
  private idleSince = 0;
  private lastRunAt = -Infinity;
  /** Set by activity, cleared by a collection (or a check that found nothing to give back). */
  private armed = true;
  private elu: EventLoopUtilization | undefined;

  constructor(o: MemoryReducerOptions) {
    this.log = o.log;
    this.idleMs = o.idleMs ?? 5_000;
    this.minIntervalMs = o.minIntervalMs ?? 30_000;
    this.minSlackBytes = o.minSlackBytes ?? 16 * MB;
    this.maxUtilization = o.maxUtilization ?? 0.05;
    this.gc = o.gc;
  }

  /** Something happened (an HTTP request): the idle period starts over. Cheap enough for every request. */
  noteActivity(): void {
    this.activity++;
  }

  start(): void {
    if (this.timer || this.gc === null) return;
    this.idleSince = performance.now();
    this.elu = performance.eventLoopUtilization();
    // A handful of checks per idle period; the timer never keeps the process alive.
    this.timer = setInterval(() => this.check(), Math.max(50, Math.min(1_000, this.idleMs / 4)));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private check(): void {
    const now = performance.now();
    const elu = performance.eventLoopUtilization(this.elu);
    this.elu = performance.eventLoopUtilization();
    if (this.activity !== this.seenActivity || elu.utilization > this.maxUtilization) {
      this.seenActivity = this.activity;
      this.idleSince = now;
      this.armed = true;
      return;
    }
    if (!this.armed || now - this.idleSince < this.idleMs || now - this.lastRunAt < this.minIntervalMs) return;
    this.armed = false;
    const heap = v8.getHeapStatistics();
    if (heap.total_heap_size - heap.used_heap_size <= this.minSlackBytes) return;
    this.reduce(heap.total_heap_size);
  }

  private reduce(heapTotalBefore: number): void {
    if (this.gc === undefined) this.gc = obtainGc() ?? null;
    if (this.gc === null) {
      this.log.debug('memory reducer disabled: V8 does not expose gc');
      this.stop();
      return;
    }
    const rssBefore = process.memoryUsage.rss();
    const started = performance.now();
    try {
      this.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    } catch (err) {
      this.log.debug({ err }, 'memory reducer collection failed; disabling it');
      this.gc = null;
      this.stop();
      return;
    }
    const ms = performance.now() - started;
    this.runs++;
    this.lastRunAt = performance.now();
    // The collection's own pause must not count as activity at the next check.
    this.elu = performance.eventLoopUtilization();
    const heapAfter = v8.getHeapStatistics();
    this.log.debug(
      {
        runs: this.runs,
        ms: Math.round(ms),
        rss_before_mb: mb(rssBefore),
        rss_after_mb: mb(process.memoryUsage.rss()),
        heap_total_before_mb: mb(heapTotalBefore),
        heap_total_after_mb: mb(heapAfter.total_heap_size),
        heap_used_after_mb: mb(heapAfter.used_heap_size),
      },
      'reduced memory after idling',
    );
  }
}
