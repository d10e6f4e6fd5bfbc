/**
 * The event loop's delay, as the `nodejs_eventloop_lag_*` metrics report it, without waking an idle process a hundred
 * times a second.
 *
 * prom-client measures it with Node's `monitorEventLoopDelay` at a 10 ms resolution: a timer in libuv that fires
 * every 10 ms, busy or idle, and records how late it fired. On a service that idles for days that timer was most of
 * its idle CPU (1.7 % of a core against 0.5–0.7 % without it, on this project's 2-core machine). Here a timer of our
 * own does the same at two paces: once a second while the loop is idle, every 10 ms for a while once it is not.
 *
 * - Idle to busy: a second in which the main thread spent 5 % of it or more on the processor, or a tick 10 ms late or
 *   more while the thread worked (a stall of its own making: 10 ms, and 5 % of the time since the last tick, spent
 *   on the processor).
 * - Busy to idle: 5 s after the pace turned busy or such a tick last came. The next second, at the idle pace,
 *   measures the thread again. The busy pace does not: at 10 ms its own ticks cost the thread about 2 % of a slow
 *   machine's core, and a window's ticks cannot be told from the work around them.
 *
 * The measure is the thread's processor time, not the loop's utilization or the ticks' lateness alone: on a host busy
 * with other processes the thread waits for a processor, its timers fire late and its callbacks take longer on the
 * wall clock, though it does no more work. An earlier monitor turned busy on that and stayed busy, a hundred wake-ups
 * a second on a host with none to spare. Such a late tick is still recorded: the delay is real.
 *
 * A stall that starts from idle is recorded when it delays the once-a-second tick; from then on the loop is sampled
 * every 10 ms. Under steady work the pace is busy five seconds in six.
 */

import { createHistogram, performance, type RecordableHistogram } from 'node:perf_hooks';

/** The main thread's processor time so far, in milliseconds. */
function threadCpuMs(): number {
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1_000;
}

export interface LoopDelayOptions {
  /** The tick's interval while the loop is busy; default 10 ms (prom-client's and Node's default resolution). */
  busyMs?: number;
  /** The tick's interval while it is idle; default 1 s. */
  idleMs?: number;
  /** At the idle pace, how long the loop is measured before deciding; default 1 s. */
  windowMs?: number;
  /** The thread's share of a window's time on the processor from which it makes the pace busy; default 5 %. */
  busyShare?: number;
  /** How long the busy pace lasts after its last cause; default 5 s. */
  holdMs?: number;
  /** A tick at least this late, the thread working as above while it waited, makes the pace busy; default 10 ms. */
  lateMs?: number;
}

/** What the metrics report for one scrape's window, in seconds; all 0 when nothing was sampled in it. */
export interface LoopDelayFigures {
  samples: number;
  min: number;
  max: number;
  mean: number;
  stddev: number;
  p50: number;
  p90: number;
  p99: number;
}

export class LoopDelay {
  private readonly histogram: RecordableHistogram = createHistogram();
  private readonly busyMs: number;
  private readonly idleMs: number;
  private readonly windowMs: number;
  private readonly busyShare: number;
  private readonly holdMs: number;
  private readonly lateMs: number;
  private timer: NodeJS.Timeout | undefined;
  private due = 0;
  private windowStart = 0;
  private windowCpu = 0;
  private lastTick = 0;
  private lastTickCpu = 0;
  private busyUntil = 0;
  /** The pace now. */
  busy = false;
  /** Ticks since start (tests). */
  ticks = 0;

  constructor(o: LoopDelayOptions = {}) {
    this.busyMs = o.busyMs ?? 10;
    this.idleMs = o.idleMs ?? 1_000;
    this.windowMs = o.windowMs ?? 1_000;
    this.busyShare = o.busyShare ?? 0.05;
    this.holdMs = o.holdMs ?? 5_000;
    this.lateMs = o.lateMs ?? 10;
  }

  start(): void {
    if (this.timer) return;
    const now = performance.now();
    const cpu = threadCpuMs();
    this.newWindow(now, cpu);
    this.lastTick = now;
    this.lastTickCpu = cpu;
    this.arm();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The figures since the last call, then starts a new window. */
  take(): LoopDelayFigures {
    const h = this.histogram;
    const n = h.count;
    const s = (ns: number) => (n ? ns / 1e9 : 0);
    const figures = {
      samples: n,
      min: s(h.min),
      max: s(h.max),
      mean: s(h.mean),
      stddev: s(h.stddev),
      p50: s(h.percentile(50)),
      p90: s(h.percentile(90)),
      p99: s(h.percentile(99)),
    };
    h.reset();
    return figures;
  }

  private newWindow(now: number, cpu: number): void {
    this.windowStart = now;
    this.windowCpu = cpu;
  }

  /** Makes the pace busy until `holdMs` after `now`. */
  hold(now: number): void {
    this.busy = true;
    this.busyUntil = now + this.holdMs;
  }

  private arm(): void {
    const ms = this.busy ? this.busyMs : this.idleMs;
    this.due = performance.now() + ms;
    this.timer = setTimeout(this.tick, ms);
    this.timer.unref();
  }

  private readonly tick = (): void => {
    const now = performance.now();
    this.ticks++;
    const lateMs = now - this.due;
    // libuv compares against the loop's cached clock, so a tick can come a fraction of a millisecond early.
    this.histogram.record(Math.max(1, Math.round(lateMs * 1e6)));
    // A late tick counts when the thread was working while it waited: it spent at least `lateMs` on the processor
    // since the last tick, and the busy share of that time. Without the first, a tick 10 ms late at the busy pace
    // would count when a garbage collection or two filled 5 % of its 20 ms.
    const cpu = threadCpuMs();
    const worked = cpu - this.lastTickCpu;
    const late = lateMs >= this.lateMs && worked >= this.lateMs && worked / (now - this.lastTick) >= this.busyShare;
    this.lastTick = now;
    this.lastTickCpu = cpu;
    if (late) this.hold(now);
    else if (this.busy) {
      if (now >= this.busyUntil) {
        this.busy = false;
        this.newWindow(now, cpu);
      }
    } else if (now - this.windowStart >= this.windowMs) {
      const share = (cpu - this.windowCpu) / (now - this.windowStart);
      this.newWindow(now, cpu);
      if (share >= this.busyShare) this.hold(now);
    }
    this.arm();
  };
}
