/**
 * The opening gate: turn-taking for the CPU-heavy steps of the message route (setting a reply up,
 * asking the model, saving the reply). A burst of messages would otherwise run those steps back to
 * back in one drain of the microtask queue (the database answers synchronously under its promise API,
 * and one group commit resolves the transactions of many openings at once), keeping the event loop
 * from the replies already streaming for tens of milliseconds: every chunk they relay waits behind it.
 *
 * Here a step that cannot start at once waits in a FIFO queue of its stage, and the queues are served
 * in the check phase of each event-loop turn, one step per `setImmediate` callback, while the steps
 * started in this turn took less than a time budget (and at most a few steps a turn). Node drains the
 * microtask queue between two immediate callbacks, so each admitted step's synchronous work is done
 * before the next is considered, and the sockets (the chunks of the open streams) are served in the
 * poll phase between two turns. An idle service admits a step at once.
 *
 * Stages: `open` (a new message, before its chat is read and its quota counted), `setup` (the
 * question is stored: the context and the model request) and `save` (the reply is saved). A later
 * stage goes first: a started opening reaches its first chunk before new ones start, and within a
 * stage the order is arrival order. Only `open` is bounded: a full queue refuses a new message
 * (`GateFull`); what has passed it holds a quota count and always gets its turn.
 *
 * New openings also wait while the event loop is busy (`maxLoad`): the chunks of the streams already running then
 * need it, and an opening costs several times what a chunk does. A burst of messages on a busy service thus starts a
 * little later, and what is already streaming keeps flowing.
 *
 * HERALD_GATE_MIN_MS, HERALD_GATE_MAX_MS, HERALD_GATE_SHARE, HERALD_GATE_PER_TURN, HERALD_GATE_MAX_LOAD (0 turns
 * the hold off), HERALD_GATE_MAX_HOLD_MS and HERALD_GATE_LOAD_TAU_MS tune the service's gate (for benchmarks; the
 * defaults are below).
 */
import { performance } from 'node:perf_hooks';

export type Stage = 'open' | 'setup' | 'save';
/** Served first to last. */
const ORDER: readonly Stage[] = ['save', 'setup', 'open'];

export interface GateOptions {
  /**
   * Steps start in a turn while those started in it took less than its budget (the first always starts): `share` of
   * the time the loop spent on everything else since the gate's last turn (the open streams' chunks, new requests),
   * within [budgetMs, maxBudgetMs]. So the openings take about `share` / (1 + `share`) of a busy loop at least, and
   * a turn lasts at most 1 + `share` times what the rest of it took.
   */
  budgetMs: number;
  maxBudgetMs?: number;
  share?: number;
  /** Steps started in one turn at most. */
  maxPerTurn: number;
  /** New openings waiting at most; one more is refused with `GateFull`. */
  maxWaiting: number;
  /**
   * New openings wait while `load()` (the loop's recent busy share, 0–1) is over this, so that the streams already
   * running keep the loop they need; 0 (the default) never holds them. One is admitted at least every `maxHoldMs`
   * whatever the load, so a loop kept busy by other work slows new messages down without starving them.
   */
  maxLoad?: number;
  maxHoldMs?: number;
  load?: () => number;
  now?: () => number;
}

/** The opening queue is full. */
export class GateFull extends Error {
  readonly waiting: number;
  constructor(waiting: number) {
    super(`${waiting} new messages are waiting already`);
    this.waiting = waiting;
    this.name = 'GateFull';
  }
}

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
  done: boolean;
}

/**
 * The event loop's busy share (libuv's loop utilization), smoothed over about `tauMs`: a step's or a burst's
 * few milliseconds move it little, a loop busy for tens of milliseconds moves it most of the way.
 */
export function loopLoad(tauMs: number): () => number {
  let last = performance.eventLoopUtilization();
  let value = 0;
  return () => {
    const now = performance.eventLoopUtilization();
    const d = performance.eventLoopUtilization(now, last);
    const dt = d.idle + d.active;
    if (dt > 0) {
      value += (d.utilization - value) * (1 - Math.exp(-dt / tauMs));
      last = now;
    }
    return value;
  };
}

class Fifo {
  private items: (Waiter | undefined)[] = [];
  private head = 0;
  /** Waiters not yet admitted nor cancelled. */
  live = 0;
  push(w: Waiter): void {
    this.items.push(w);
    this.live++;
  }
  /** The first live waiter, taken off the queue. */
  shift(): Waiter | undefined {
    while (this.head < this.items.length) {
      const w = this.items[this.head];
      this.items[this.head++] = undefined;
      if (w && !w.done) {
        this.live--;
        this.compact();
        return w;
      }
    }
    this.compact();
    return undefined;
  }
  cancelled(): void {
    this.live--;
    this.compact();
  }
  private compact(): void {
    if (this.live === 0) {
      this.items.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

export class TurnGate {
  private readonly opts: Required<GateOptions>;
  private readonly queues: Record<Stage, Fifo> = { save: new Fifo(), setup: new Fifo(), open: new Fifo() };
  /** Steps started at once (nobody waiting) in this turn. */
  private atOnce = 0;
  private resetQueued = false;
  private slotsQueued = false;
  private turnStart = 0;
  private turnBudget = 0;
  /** When the gate's last turn ended (its last slot ran, after the steps it started). */
  private lastEnd = 0;
  /** When the last new opening was admitted. */
  private lastOpen = Number.NEGATIVE_INFINITY;
  /** A new opening waited for the load in this turn. */
  private held = false;
  private holdTimer?: NodeJS.Timeout;

  constructor(opts: GateOptions) {
    this.opts = {
      now: () => performance.now(),
      maxBudgetMs: opts.budgetMs,
      share: 0,
      maxLoad: 0,
      maxHoldMs: 100,
      load: () => 0,
      ...opts,
    };
  }

  /** Steps of `stage` waiting. */
  waitingIn(stage: Stage): number {
    return this.queues[stage].live;
  }

  /** Steps waiting, all stages. */
  get waiting(): number {
    return this.queues.save.live + this.queues.setup.live + this.queues.open.live;
  }

  /**
   * Resolves when the caller may run its step of `stage`: at once (undefined) when nobody waits and
   * no step started at once in this turn yet, else in a later turn (see the module comment). With
   * `signal`, a step still waiting when it aborts leaves the queue and the promise rejects with the
   * signal's reason. Throws `GateFull` when a new opening finds `maxWaiting` waiting. Use as
   * `await gate.enter(stage)`.
   */
  enter(stage: Stage, signal?: AbortSignal): Promise<void> | undefined {
    const now = stage === 'open' ? this.opts.now() : 0;
    if (this.waiting === 0 && this.atOnce === 0 && !(stage === 'open' && this.holds(now))) {
      if (stage === 'open') this.lastOpen = now;
      this.atOnce++;
      if (!this.resetQueued) {
        this.resetQueued = true;
        setImmediate(this.reset);
      }
      return undefined;
    }
    const queue = this.queues[stage];
    if (stage === 'open' && queue.live >= this.opts.maxWaiting) throw new GateFull(queue.live);
    if (signal?.aborted) return Promise.reject(signal.reason);
    const p = new Promise<void>((resolve, reject) => {
      const w: Waiter = { resolve, reject, signal, done: false };
      if (signal) {
        w.onAbort = () => {
          if (w.done) return;
          w.done = true;
          queue.cancelled();
          reject(signal.reason);
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      queue.push(w);
    });
    this.queueSlots();
    return p;
  }

  private readonly reset = (): void => {
    this.resetQueued = false;
    this.atOnce = 0;
  };

  /** Whether a new opening waits for the load at `now`. */
  private holds(now: number): boolean {
    const { maxLoad, maxHoldMs, load } = this.opts;
    return maxLoad > 0 && now - this.lastOpen < maxHoldMs && load() > maxLoad;
  }

  /** This turn's check phase gets `maxPerTurn` callbacks, each of which may start one step, and one to end it. */
  private queueSlots(): void {
    if (this.slotsQueued || this.holdTimer) return;
    this.slotsQueued = true;
    // One more at the end, after the last step's work: the turn's end.
    for (let i = 0; i <= this.opts.maxPerTurn; i++) setImmediate(this.slot, i);
  }

  private readonly slot = (i: number): void => {
    const now = this.opts.now();
    const { budgetMs, maxBudgetMs, share } = this.opts;
    if (i === 0) {
      this.turnStart = now;
      this.turnBudget = Math.min(maxBudgetMs, Math.max(budgetMs, share * (now - this.lastEnd)));
    }
    if (i === 0) this.held = false;
    if (i === this.opts.maxPerTurn) {
      this.lastEnd = now;
      this.slotsQueued = false;
      if (this.waiting === 0) return;
      // Only new openings wait, for the load: the next turn is a timer's, so that the loop may idle meanwhile (the
      // check phase's callbacks would make it poll without waiting, and its load read as full).
      if (this.held && this.waiting === this.queues.open.live) {
        this.holdTimer = setTimeout(this.afterHold, 1);
        return;
      }
      // Queued from the check phase, these run in the next turn, after its timers and sockets.
      this.queueSlots();
    } else if (i === 0 || now - this.turnStart < this.turnBudget) this.admit(now);
  };

  private readonly afterHold = (): void => {
    this.holdTimer = undefined;
    if (this.waiting > 0) this.queueSlots();
  };

  private admit(now: number): void {
    for (const stage of ORDER) {
      if (stage === 'open' && this.queues.open.live > 0 && this.holds(now)) {
        this.held = true;
        continue;
      }
      const w = this.queues[stage].shift();
      if (!w) continue;
      if (stage === 'open') this.lastOpen = now;
      w.done = true;
      if (w.onAbort) w.signal!.removeEventListener('abort', w.onAbort);
      w.resolve();
      return;
    }
  }
}

/** New messages waiting at most in the service's gate. */
export const MAX_WAITING = 5000;
const tune = (name: string, v: number) => Number(process.env[`HERALD_GATE_${name}`] ?? v);
/**
 * Steps start in one turn while those started in it took under a fifth of the time the loop spent on other work since
 * the gate's last turn, within 1–2 ms, at most 8 steps. Against half and 1–4 ms (the first defaults), on a quiet
 * machine with 500 streams opening: the loop's own lateness p99 while they open ~17 ms instead of ~26 (medians of
 * nine and twelve runs), the first chunk's p99 ~3 % later (scripts/bench/RESULTS.md, fourteenth session).
 *
 * New openings wait while the loop was more than 65 % busy over the last ~50 ms, one at least every 100 ms. With 500
 * streams opening on one core, the relayed chunks' p99 while they open (the service's own part) fell from ~25–40 to
 * ~8–16 ms, and the last first chunks came ~0.6–1 s later (RESULTS.md, twenty-first session).
 */
export const gate = new TurnGate({
  budgetMs: tune('MIN_MS', 1),
  maxBudgetMs: tune('MAX_MS', 2),
  share: tune('SHARE', 0.2),
  maxPerTurn: tune('PER_TURN', 8),
  maxWaiting: MAX_WAITING,
  maxLoad: tune('MAX_LOAD', 0.65),
  maxHoldMs: tune('MAX_HOLD_MS', 100),
  load: loopLoad(tune('LOAD_TAU_MS', 50)),
});
