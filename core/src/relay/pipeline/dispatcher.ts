import type { Core } from '../../core.ts';
import type { Queryable } from '../../db/database.ts';
import { Database } from '../../db/database.ts';
import { liveOf } from '../../live/hints.ts';
import type { MessageRef, OutboundMessage, SendResult } from '../../plugin-api/index.ts';
import { errorCode, type Locale } from '../../plugin-api/index.ts';
import { errorText, loggedFaults, pluginFault, targetRowFrom } from '../../plugins/host.ts';
import { selfMonitoringOf } from '../../plugins/self-monitoring.ts';
import type { TemplateCatalog } from '../templates/catalog.ts';
import { eventStatus } from './decide.ts';
import { digestLimits, failDigestIfFinal, isDigest, releaseDigests, renderDigest, settleDigest } from './digest.ts';
import { fitMessage } from './fit.ts';
import type { HandedDelivery, SendEvent } from './ingest.ts';
import { TargetLanes } from './lanes.ts';
import type { SelfMonitor } from './monitor.ts';
import { type Pace, Pacer, PacingAborted, paceOf } from './pace.ts';
import { renderMessage, SharedRenders, type TargetSide } from './render.ts';
import { loadSendContext, overrideKey, type SendContext } from './send-context.ts';
import { correlationKey, findThread, followUp, recordThread, type SendMode, storableRef } from './updates.ts';

const BATCH = 200;
/**
 * How long a claim holds a row without renewal. Claims still waiting or sending are renewed every
 * LEASE_MS / 3, so a live worker never loses a row however slow its target, and the rows of a
 * worker that died go back to the queue within LEASE_MS.
 */
export const LEASE_MS = 15_000;
const SEND_TIMEOUT_MS = 30_000;
/**
 * At shutdown, how long sends aborted at the end of the grace period get to settle (their rows go
 * back to the queue); a send that ignores its signal is left behind, its row leased.
 */
const ABORTED_SETTLE_MS = 1000;
export const MAX_ATTEMPTS = 8;

/** Exponential backoff with jitter: ~2 s, 4 s, 8 s… capped at 10 minutes. */
export function backoffMs(attempt: number): number {
  const base = Math.min(600_000, 2000 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.5 + Math.random() * 0.5));
}

/**
 * How far ahead a paced target's lane may hold claimed rows, in ms of its pace (at least its burst).
 * Rows beyond go back to the queue, due when the lane will have room, so a slow channel's backlog
 * waits in the database, not in memory, and never crowds out other targets' claims.
 */
const PACED_AHEAD_MS = 5_000;

interface DeliveryRow {
  id: string;
  event_id: string;
  user_id: string;
  tracker_id: string | null;
  target_id: string;
  attempts: number;
  /** Parts of a split message the channel already accepted (absent on handed-off rows: 0). */
  parts_sent?: number;
}

/**
 * Sends due deliveries from the durable queue. Rows are claimed with a lease (and, on PostgreSQL,
 * FOR UPDATE SKIP LOCKED) so each is sent by one worker; a row whose worker died is claimed again
 * when its lease runs out. Sends to one target start in claim order, up to the concurrency its
 * plugin declares (one at a time by default); rows released from quiet hours go one at a time.
 * Different targets go in parallel.
 */
export class Dispatcher {
  private core: Core;
  private catalog: TemplateCatalog;
  private monitor: SelfMonitor;
  private running = false;
  private wakeUp?: () => void;
  private loop?: Promise<void>;
  /** Stopping outlasted its grace period and aborted the sends in flight (cleared by start()). */
  private cutOff = false;
  /** Claimed rows that will not be sent now that the dispatcher is stopping, to give back together. */
  private unsent: string[] = [];
  private inflight = new Set<Promise<void>>();
  private lanes = new TargetLanes();
  /** Delivery ids released from quiet hours and not yet scheduled: sent one at a time, in order. */
  private released = new Set<string>();
  private currentPass: Promise<number> = Promise.resolve(0);
  /** Rows this worker claimed and has not finished: their leases are renewed. */
  private claimed = new Set<string>();
  /** Sent rows whose record is being written (their lane slot already free); the settle releases their claim. */
  private settling = new Set<string>();
  private renewTimer?: NodeJS.Timeout;
  /**
   * True while the queue may hold due rows this worker has not claimed yet (the last claim was full,
   * or claiming paused for the backlog in memory). New events then queue behind them rather than
   * being handed off ahead of them, so one target's messages keep their order.
   */
  private behind = false;
  /** The last claim found nothing due: the next one reads before it claims (see claim). */
  private foundNone = true;
  /** Pacing of targets that declare `ratePerSecond`. */
  private pacer: Pacer;
  /** Aborted first thing on stop: sends waiting for their pace give their rows back at once. */
  private pacingStop = new AbortController();
  /**
   * Paced targets whose overflow this worker put back in the queue: the rows' ids and when the last
   * of them is due. While a target is held, its handed-off rows queue behind those (no overtaking).
   */
  private held = new Map<string, { until: number; ids: Set<string> }>();
  /** Event changes already published (one change is shared by the deliveries of an event that commit together). */
  private told = new WeakSet<EventChange>();
  /**
   * Per batch, its events with more than one delivery in it: their shared renders, and how many of those deliveries
   * are yet to render (the renders are let go after the last, not kept while the batch's other sends run).
   */
  private fanouts = new WeakMap<SendContext, Map<string, { left: number; renders?: SharedRenders }>>();
  /**
   * The calls to targets in flight, aborted when stopping outlasts its grace period. A set, not a listener each on the
   * stop signal: adding and removing one walks all the others (hundreds in flight in a fan-out).
   */
  private calls = new Set<AbortController>();
  /**
   * Told whenever handoffLease() would start or stop giving leases (the dispatch thread forwards it
   * to the main thread, which writes deliveries already claimed only while this worker has room).
   */
  onOpen?: (open: boolean) => void;
  private open = false;

  constructor(core: Core, catalog: TemplateCatalog, monitor: SelfMonitor) {
    this.core = core;
    this.catalog = catalog;
    this.monitor = monitor;
    this.pacer = new Pacer(core.db);
    // A send finished: when the claimed-ahead backlog ran low, claim more at once. Only while the last claim found
    // rows, or rows of a paced target wait in the queue to be taken again: sends handed off at ingest leave nothing
    // queued (ingest wakes the loop when it does queue), and a pass after each of them only read that nothing is due.
    this.lanes.onIdle = () => {
      if (this.lanes.waiting < BATCH && (!this.foundNone || this.held.size > 0)) this.wake();
      this.report();
    };
  }

  private report(): void {
    if (!this.onOpen) return;
    const open = this.running && !this.behind && this.lanes.waiting < BATCH;
    if (open !== this.open) {
      this.open = open;
      this.onOpen(open);
    }
  }

  wake(): void {
    this.wakeUp?.();
  }

  /**
   * The lease for deliveries written already claimed by this worker (handed off at ingest), or
   * undefined when they should go through the queue: dispatcher stopped, behind, or busy.
   */
  handoffLease(): Date | undefined {
    if (!this.running || this.behind || this.lanes.waiting >= BATCH) return undefined;
    return new Date(this.core.clock.now().getTime() + LEASE_MS);
  }

  /** Takes deliveries written already claimed (see handoffLease) and schedules their sends. */
  accept(handed: HandedDelivery[]): void {
    if (!this.running) {
      // Stopped between the lease and the commit: give the rows back to the queue for the next
      // worker (should that fail too, their lease runs out and they are claimed again anyway).
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
    const ctx: SendContext = { events: new Map(), targets: new Map(), trackerNames: new Map(), overrides: new Map() };
    for (const h of handed) {
      ctx.events.set(h.row.event_id, h.event);
      ctx.targets.set(h.row.target_id, h.target);
      if (h.row.tracker_id && h.trackerName !== null) ctx.trackerNames.set(h.row.tracker_id, h.trackerName);
      const locale = h.target.locale === 'ru' ? 'ru' : 'en';
      if (h.override) ctx.overrides.set(overrideKey(h.row.user_id, String(h.event.event_type), locale), h.override);
    }
    this.schedule(
      handed.map((h) => h.row),
      ctx,
      true,
    );
    this.report();
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    if (this.pacingStop.signal.aborted) this.pacingStop = new AbortController();
    this.cutOff = false;
    this.renewTimer = setInterval(() => {
      void this.renewLeases().catch((err) =>
        this.core.logs.get('relay').warn({ err }, 'renewing delivery leases failed'),
      );
    }, LEASE_MS / 3);
    this.renewTimer.unref();
    this.report();
    this.loop = (async () => {
      while (this.running) {
        let claimed = 0;
        const pass = (async () => {
          await this.releaseDue();
          return this.claimAndSend();
        })();
        this.currentPass = pass.catch(() => 0);
        try {
          claimed = await pass;
        } catch (err) {
          this.core.logs.get('relay').error({ err }, 'dispatch pass failed');
        }
        if (!this.running) break;
        if (claimed >= BATCH) continue;
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, claimed ? 50 : 1000);
          this.wakeUp = () => {
            clearTimeout(t);
            resolve();
          };
        });
        this.wakeUp = undefined;
      }
    })();
  }

  /**
   * Shutdown. Claiming stops at once, and no send starts any more: rows claimed but not started go
   * back to the queue. Sends in flight may finish until `grace` aborts (at once without it); then
   * their signal aborts them and their rows go back to the queue too, as queued and with the
   * attempt not counted. Resolves when that is written.
   */
  async stop(grace?: AbortSignal): Promise<void> {
    this.running = false;
    this.report();
    this.pacingStop.abort();
    this.wake();
    await this.loop;
    if (grace && !grace.aborted)
      await Promise.race([this.drain(), new Promise((r) => grace.addEventListener('abort', r, { once: true }))]);
    this.cutOff = true;
    const reason = new DOMException('the service is shutting down', 'AbortError');
    for (const ac of this.calls) ac.abort(reason);
    await Promise.race([this.drain(), new Promise((r) => setTimeout(r, ABORTED_SETTLE_MS).unref())]);
    clearInterval(this.renewTimer);
    const ids = this.unsent.splice(0);
    if (ids.length) await this.requeue(ids, this.core.clock.now().getTime());
  }

  /** Extends the lease of every row this worker still holds. */
  async renewLeases(): Promise<void> {
    const ids = [...this.claimed];
    const lease = new Date(this.core.clock.now().getTime() + LEASE_MS).toISOString();
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      await this.core.db.run(
        `UPDATE deliveries SET lease_until = ? WHERE status = 'sending' AND id IN (${chunk.map(() => '?').join(',')})`,
        [lease, ...chunk],
      );
    }
  }

  /** Waits for every send in flight. */
  async drain(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
  }

  /** One full pass (tests, shutdown): release due deferred rows, send everything due, wait for it. */
  async tick(): Promise<void> {
    await this.currentPass;
    for (;;) {
      await this.releaseDue();
      const n = await this.claimAndSend();
      await this.drain();
      await this.currentPass;
      if (n === 0 && this.inflight.size === 0) break;
    }
  }

  /**
   * Moves deferred rows whose quiet hours ended back to the queue, oldest first. Rows of trackers
   * that release a digest go out as one digest per target instead (digest.ts).
   */
  async releaseDue(): Promise<number> {
    const db = this.core.db;
    const live = liveOf(this.core.services);
    const changes: EventChange[] = [];
    const digests = await releaseDigests(this.core, (q, eventId) => this.refreshWith(q, eventId, changes));
    for (const c of changes.splice(0)) this.published(c);
    for (const userId of digests.users) {
      live.publish(userId, { kind: 'deferred' });
      await this.monitor.checkBacklog(userId);
    }
    const now = this.core.clock.now().toISOString();
    // The loop asks every second: while nothing is due a read says so, without opening a transaction.
    if (!(await db.get('SELECT 1 AS due FROM deferred_dispatch WHERE release_at <= ? LIMIT 1', [now]))) return 0;
    const lock = db.dialect === 'postgresql' ? ' FOR UPDATE SKIP LOCKED' : '';
    const released = await db.tx(async (q) => {
      const rows = await q.all<{ id: string; delivery_id: string; event_id: string; user_id: string }>(
        `SELECT id, delivery_id, event_id, user_id FROM deferred_dispatch dd WHERE release_at <= ?
           AND NOT EXISTS (SELECT 1 FROM trackers tr WHERE tr.id = dd.tracker_id AND tr.quiet_release = 'digest')
         ORDER BY release_at, event_id LIMIT 500${lock}`,
        [now],
      );
      for (const r of rows) {
        this.released.add(r.delivery_id);
        await q.run('DELETE FROM deferred_dispatch WHERE id = ?', [r.id]);
        await q.run(
          `UPDATE deliveries SET status = 'queued', next_attempt_at = ?, updated_at = ? WHERE id = ? AND ` +
            `status = 'deferred'`,
          [now, now, r.delivery_id],
        );
      }
      return rows;
    });
    for (const userId of new Set(released.map((r) => r.user_id))) live.publish(userId, { kind: 'deferred' });
    for (const eventId of new Set(released.map((r) => r.event_id))) await this.refreshEvent(eventId);
    for (const userId of new Set(released.map((r) => r.user_id))) await this.monitor.checkBacklog(userId);
    return released.length;
  }

  private async claim(): Promise<DeliveryRow[]> {
    const db = this.core.db;
    const now = this.core.clock.now();
    const nowIso = now.toISOString();
    const lease = new Date(now.getTime() + LEASE_MS).toISOString();
    const dueRows = `FROM deliveries
                  WHERE (status = 'queued' AND next_attempt_at <= ?) OR (status = 'sending' AND lease_until < ?)`;
    // An idle service asks every second: after a claim that found nothing, a read answers "still nothing due"
    // without a write statement (on SQLite the claim's UPDATE takes the file's write lock and commits even when it
    // changes nothing). While claims find work, they claim at once.
    if (this.foundNone && !(await db.get(`SELECT 1 AS due ${dueRows} LIMIT 1`, [nowIso, nowIso]))) return [];
    const due = `SELECT id ${dueRows} ORDER BY next_attempt_at, event_id LIMIT ${BATCH}`;
    if (db.dialect === 'postgresql') {
      // Several replicas claim at once: rows another worker has locked are skipped, not waited for.
      // MATERIALIZED makes the locking subquery run exactly once, so a claim never exceeds BATCH
      // rows nor takes a row twice, whatever plan the optimiser picks.
      return db.all<DeliveryRow>(
        `WITH due AS MATERIALIZED (${due} FOR UPDATE SKIP LOCKED)
         UPDATE deliveries d SET status = 'sending', lease_until = ?, attempts = d.attempts + 1, updated_at = ?
           FROM due WHERE d.id = due.id
         RETURNING d.id, d.event_id, d.user_id, d.tracker_id, d.target_id, d.attempts, d.parts_sent`,
        [nowIso, nowIso, lease, nowIso],
      );
    }
    // SQLite: one writer at a time, so the UPDATE with its subquery is atomic as it stands.
    return db.all<DeliveryRow>(
      `UPDATE deliveries SET status = 'sending', lease_until = ?, attempts = attempts + 1, updated_at = ?
        WHERE id IN (${due})
        RETURNING id, event_id, user_id, tracker_id, target_id, attempts, parts_sent`,
      [lease, nowIso, nowIso, nowIso],
    );
  }

  private async claimAndSend(): Promise<number> {
    // Claimed rows wait in memory (leased) until their lane has room; do not run far ahead of the sends.
    if (this.lanes.waiting >= 2 * BATCH) {
      this.behind = true;
      this.report();
      return 0;
    }
    const rows = (await this.claim()).sort((a, b) => (a.event_id < b.event_id ? -1 : 1));
    this.foundNone = rows.length === 0;
    this.behind = rows.length >= BATCH;
    this.report();
    if (!rows.length) return 0;
    let ctx: SendContext;
    try {
      ctx = await loadSendContext(this.core.db, rows);
    } catch (err) {
      // The rows stay leased and come back when the lease runs out.
      this.core.logs.get('relay').error({ err }, 'loading the claimed deliveries failed');
      return 0;
    }
    this.schedule(rows, ctx);
    this.report();
    return rows.length;
  }

  /**
   * Puts claimed rows on their targets' lanes, in the given order. A paced target's lane holds only
   * what it sends within PACED_AHEAD_MS; the rest goes back to the queue (see giveBack).
   */
  private schedule(rows: DeliveryRow[], ctx: SendContext, handed = false): void {
    let back: Map<string, { until: number; ids: string[] }> | undefined;
    const perEvent = new Map<string, { left: number }>();
    for (const row of rows) {
      const tgt = ctx.targets.get(row.target_id);
      const limits = tgt ? this.core.plugins.target(tgt.kind)?.def.manifest.limits : undefined;
      const pace = paceOf(limits);
      if (pace) {
        const until = this.overflowing(row, pace, handed);
        if (until !== undefined) {
          back ??= new Map();
          const b = back.get(row.target_id) ?? { until, ids: [] };
          b.until = Math.max(b.until, until);
          b.ids.push(row.id);
          back.set(row.target_id, b);
          continue;
        }
      }
      this.claimed.add(row.id);
      const n = perEvent.get(row.event_id);
      if (n) n.left++;
      else perEvent.set(row.event_id, { left: 1 });
      const limit = limits?.concurrency || 1;
      const ordered = this.released.delete(row.id);
      const done = this.lanes.push(row.target_id, limit, ordered, () =>
        this.deliver(row, ctx).catch((err) => this.core.logs.get('relay').error({ err }, 'delivery crashed')),
      );
      this.inflight.add(done);
      void done.finally(() => {
        this.inflight.delete(done);
        // A sent row still settling keeps its lease; its settle lets go of it.
        if (!this.settling.has(row.id)) this.claimed.delete(row.id);
      });
    }
    if (back) for (const [, b] of back) this.giveBack(b.ids, b.until);
    for (const [id, n] of perEvent) if (n.left < 2) perEvent.delete(id);
    if (perEvent.size) this.fanouts.set(ctx, perEvent);
  }

  /**
   * For a row of a paced target: undefined when its lane should take it, else the time (service
   * clock, ms) it should be due again. A lane takes rows while it holds less than PACED_AHEAD_MS of
   * sends; a handed-off row also waits while rows of its target wait in the queue, so none overtakes them.
   */
  private overflowing(row: DeliveryRow, pace: Pace, handed: boolean): number | undefined {
    const now = this.core.clock.now().getTime();
    let held = this.held.get(row.target_id);
    if (held && (held.ids.delete(row.id), !held.ids.size || held.until + LEASE_MS < now)) {
      // Every row put back was claimed again (or, long past due, by another replica).
      this.held.delete(row.target_id);
      held = undefined;
    }
    const cap = Math.max(
      1 + Math.round(pace.toleranceMs / pace.intervalMs),
      Math.ceil(PACED_AHEAD_MS / pace.intervalMs),
    );
    const pending = this.lanes.pending(row.target_id);
    if (pending < cap && !(handed && held)) return undefined;
    // Due when the lane is down to half its room: it is never idle while rows wait.
    const until = Math.max(held?.until ?? 0, now + Math.max(0, pending - Math.floor(cap / 2)) * pace.intervalMs);
    if (held) {
      held.until = until;
      held.ids.add(row.id);
    } else this.held.set(row.target_id, { until, ids: new Set([row.id]) });
    return until;
  }

  /** Returns claimed rows to the queue untouched (the claim's attempt is not counted), due at `until`. */
  private giveBack(ids: string[], until: number): void {
    const write = this.requeue(ids, until);
    this.inflight.add(write);
    void write.finally(() => this.inflight.delete(write));
  }

  private async requeue(ids: string[], until: number): Promise<void> {
    const now = this.core.clock.now().toISOString();
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      await this.core.db
        .run(
          `UPDATE deliveries SET status = 'queued', lease_until = NULL, attempts = attempts - 1, next_attempt_at = ?,
            updated_at = ?
          WHERE status = 'sending' AND id IN (${chunk.map(() => '?').join(',')})`,
          [new Date(until).toISOString(), now, ...chunk],
        )
        .catch((err) =>
          this.core.logs
            .get('relay')
            .warn({ err }, 'returning claimed deliveries to the queue failed; their lease will run out'),
        );
    }
  }

  /**
   * A delivery's message. The deliveries of an event in one batch share its renders (render.ts) until the last of
   * them has rendered; an event with one delivery renders alone and keeps nothing.
   */
  private render(ctx: SendContext, ev: SendEvent, side: TargetSide): OutboundMessage {
    const facts = () => ({
      eventId: ev.id,
      eventType: ev.event_type,
      severity: ev.severity,
      payload: Database.json<Record<string, unknown>>(ev.payload, {}),
      extras: Database.json<Record<string, string> | null>(ev.extras, null),
      providerName: ev.provider_name ?? undefined,
      providerKind: ev.provider_kind,
      occurredAt: ev.occurred_at,
      test: Database.bool(ev.test),
    });
    const fanout = this.fanouts.get(ctx);
    const shared = fanout?.get(ev.id);
    if (!shared) return renderMessage(this.catalog, { ...facts(), ...side });
    if (--shared.left <= 0) fanout!.delete(ev.id);
    shared.renders ??= new SharedRenders(this.catalog, facts);
    return shared.renders.render(side);
  }

  /** Sends one message with the send timeout and the stop signal. */
  private sendOne(
    instance: Awaited<ReturnType<Core['plugins']['targetInstance']>>,
    msg: Parameters<typeof fitMessage>[0],
    attempt: number,
  ): Promise<SendResult | void> {
    return this.withSignal((signal) => instance.send(msg, { signal, attempt }));
  }

  /** Runs one call to the target (a send, an edit, a reply) with the send timeout and the stop signal. */
  private async withSignal<R>(fn: (signal: AbortSignal) => Promise<R>): Promise<R> {
    // A plain timer cleared when the send ends: AbortSignal.timeout() would keep every send's
    // signal and timer alive for the full 30 s, thousands of them under load.
    const ac = new AbortController();
    const timer = setTimeout(
      () => ac.abort(new DOMException(`the send took longer than ${SEND_TIMEOUT_MS / 1000} s`, 'TimeoutError')),
      SEND_TIMEOUT_MS,
    );
    this.calls.add(ac);
    try {
      return await fn(ac.signal);
    } finally {
      clearTimeout(timer);
      this.calls.delete(ac);
    }
  }

  private async deliver(row: DeliveryRow, ctx: SendContext): Promise<void> {
    const core = this.core;
    const db = core.db;
    const log = core.logs.get('relay');
    // Stopping: a row whose turn comes now is not sent; it goes back to the queue with the others.
    if (!this.running) {
      this.unsent.push(row.id);
      return;
    }
    const ev = ctx.events.get(row.event_id);
    const tgt = ctx.targets.get(row.target_id);
    if (!ev || !tgt) {
      await db.run('DELETE FROM deliveries WHERE id = ?', [row.id]);
      return;
    }
    const target = targetRowFrom(tgt);
    const plugin = core.plugins.target(target.kind);
    const trackerName = row.tracker_id ? ctx.trackerNames.get(row.tracker_id) : undefined;
    // Failed sends of self-monitoring events are logged only, never counted toward the target threshold.
    const isSelf = ev.provider_kind === selfMonitoringOf(core)?.kind;
    const started = performance.now();
    let sendMode: SendMode = 'send';
    let messageRef: MessageRef | undefined;
    try {
      if (!plugin) throw Object.assign(new Error(`target kind "${target.kind}" is not enabled`), { code: 'CONFIG' });
      const locale = (target.locale === 'ru' ? 'ru' : 'en') as Locale;
      const override = ctx.overrides.get(overrideKey(ev.user_id, ev.event_type, locale));
      const limits = plugin.def.manifest.limits;
      // A quiet-hours digest lists the deliveries that went in it (digest.ts); any other event renders its own
      // template.
      const msg = isDigest(ev)
        ? await renderDigest(core, this.catalog, {
            deliveryId: row.id,
            event: ev,
            locale,
            formats: limits?.formats ?? ['text'],
            targetName: target.name,
          })
        : this.render(ctx, ev, {
            deliveryId: row.id,
            locale,
            trackerName,
            targetName: target.name,
            formats: limits?.formats ?? ['text'],
            override,
          });
      // Fitted to the declared limits: one message, or the parts of a split one.
      const parts = fitMessage(msg, isDigest(ev) ? digestLimits(limits) : limits);
      const pace = paceOf(limits);
      const instance = await core.plugins.targetInstance(target);
      // Messages that follow the state (updates.ts): an event correlated with one this target sent a
      // message for edits that message, or replies to it, instead of posting anew.
      const key = correlationKey(core, ev, tgt);
      const thread =
        key && parts.length === 1 && !row.parts_sent && (instance.update || instance.reply)
          ? await findThread(db, target.id, key)
          : undefined;
      if (thread && thread.event_id <= ev.id) {
        if (pace) await this.pacer.wait(target.id, pace, this.pacingStop.signal);
        const out = await this.withSignal((signal) =>
          followUp(instance, thread, parts[0]!, { signal, attempt: row.attempts }),
        );
        if (out?.fallback)
          log.info(
            { delivery_id: row.id, target_id: target.id, reason: out.fallback },
            `following the earlier message failed; ${out.mode === 'reply' ? 'replied to it' : 'sending a new message'}`,
          );
        if (out && out.mode !== 'send') {
          sendMode = out.mode;
          messageRef = storableRef(out.result?.messageRef) ?? out.head;
          if (out.head)
            await recordThread(db, {
              targetId: target.id,
              userId: ev.user_id,
              key: key!,
              eventId: ev.id,
              eventType: ev.event_type,
              deliveryId: row.id,
              ref: out.head,
              now: core.clock.now().toISOString(),
            });
        }
      }
      for (let k = sendMode === 'send' ? (row.parts_sent ?? 0) : parts.length; k < parts.length; k++) {
        if (k > (row.parts_sent ?? 0) && !this.running) throw new PacingAborted();
        if (pace) await this.pacer.wait(target.id, pace, this.pacingStop.signal);
        const result = await this.sendOne(instance, parts[k]!, row.attempts);
        if (k === 0) {
          messageRef = storableRef(result?.messageRef);
          // Later events of the same key follow this message; recorded before the lane moves on.
          if (key && messageRef)
            await recordThread(db, {
              targetId: target.id,
              userId: ev.user_id,
              key,
              eventId: ev.id,
              eventType: ev.event_type,
              deliveryId: row.id,
              ref: messageRef,
              now: core.clock.now().toISOString(),
            });
        }
        // A retry resumes after the parts the channel accepted (one write per part, split messages only).
        if (k < parts.length - 1) {
          await db.run('UPDATE deliveries SET parts_sent = ? WHERE id = ?', [k + 1, row.id]);
          row.parts_sent = k + 1;
        }
      }
      core.metrics.dispatchDuration.observe({ channel: target.kind }, (performance.now() - started) / 1000);
    } catch (err) {
      if (err instanceof PacingAborted || this.cutOff) {
        // Stopping while the row waited for its pace, or its send was cut off by the end of the
        // grace period: back to the queue as it was, the attempt not counted. (Sent parts of a
        // split message stay counted in parts_sent.)
        this.unsent.push(row.id);
        return;
      }
      core.metrics.dispatchDuration.observe({ channel: target.kind }, (performance.now() - started) / 1000);
      await this.failed(row, target, err, isSelf, log);
      if (isDigest(ev))
        await failDigestIfFinal(db, row.id, row.event_id, core.clock.now().toISOString(), (id) =>
          this.refreshEvent(id),
        );
      await this.refreshEvent(row.event_id);
      return;
    }
    // One unit of work: the delivery is sent, the target's failure streak ends, the event's status follows.
    // The lane's slot is freed as soon as the send is done: the next send to the target need not wait
    // for this record's commit. Shutdown and tick() still wait for it (it is in flight until written).
    const now = core.clock.now().toISOString();
    const digested: EventChange[] = [];
    const settle = db
      .txThen(
        async (q) => {
          await q.run(
            `UPDATE deliveries SET status = 'sent', sent_at = ?, lease_until = NULL, last_error = NULL, ` +
              'updated_at = ?, send_mode = ?, message_ref = ? WHERE id = ?',
            [now, now, sendMode, messageRef ? JSON.stringify(messageRef) : null, row.id],
          );
          await q.run(
            'UPDATE targets SET consecutive_failures = 0, last_error = NULL WHERE id = ? AND consecutive_failures <> 0',
            [target.id],
          );
          if (isDigest(ev))
            for (const id of await settleDigest(q, row.event_id, { sentAt: now }, now))
              await this.refreshWith(q, id, digested);
        },
        // The event's status once for the deliveries of it that commit together (N targets: not N times).
        { key: `event:${row.event_id}`, run: (q) => this.refreshWith(q, row.event_id) },
      )
      .then(([, settled]) => {
        liveOf(core.services).publish(row.user_id, {
          kind: 'delivery',
          id: row.id,
          event_id: row.event_id,
          status: 'sent',
          attempts: row.attempts,
          next_attempt_at: null,
        });
        for (const c of digested) this.published(c);
        // Shared by the deliveries that committed together: told once.
        if (settled && !this.told.has(settled)) {
          this.told.add(settled);
          this.published(settled);
        }
      })
      .catch((err) =>
        log.error(
          { err, delivery_id: row.id },
          'recording a sent delivery failed; it is sent again when its lease runs out',
        ),
      )
      .finally(() => {
        this.settling.delete(row.id);
        this.claimed.delete(row.id);
        this.inflight.delete(settle);
      });
    this.settling.add(row.id);
    this.inflight.add(settle);
  }

  private async failed(
    row: DeliveryRow,
    target: { id: string; name: string; kind: string; user_id: string },
    err: unknown,
    isSelf: boolean,
    log: ReturnType<Core['logs']['get']>,
  ): Promise<void> {
    const core = this.core;
    const code = errorCode(err);
    const status = Number((err as { statusCode?: number }).statusCode ?? 0) || 0;
    const message = ((err as Error)?.message ?? String(err)).slice(0, 1000);
    core.metrics.sendFailures.inc({ target_type: target.kind, status_code: String(status) });
    const now = core.clock.now();
    const permanent = code === 'PERMANENT_SEND' || code === 'AUTH_FAILED' || code === 'CONFIG';
    const rateLimited = code === 'RATE_LIMITED';
    const exhausted = row.attempts >= MAX_ATTEMPTS;
    let nextAt: string | null = null;
    if (permanent || (exhausted && !rateLimited)) {
      await core.db.run(
        `UPDATE deliveries SET status = 'failed', lease_until = NULL, last_error = ?, last_status_code = ` +
          '?, updated_at = ? WHERE id = ?',
        [
          exhausted && !permanent ? `gave up after ${row.attempts} attempts: ${message}` : message,
          status,
          now.toISOString(),
          row.id,
        ],
      );
    } else {
      const delay = rateLimited
        ? Math.max(250, Number((err as { retryAfterMs?: number }).retryAfterMs ?? 1000))
        : backoffMs(row.attempts);
      nextAt = new Date(now.getTime() + delay).toISOString();
      await core.db.run(
        `UPDATE deliveries SET status = 'queued', lease_until = NULL, next_attempt_at = ?, last_error = ?, ` +
          'last_status_code = ?, updated_at = ? WHERE id = ?',
        [nextAt, message, status, now.toISOString(), row.id],
      );
      // Only the first attempt past the delay needs the loop awake; the timer wakes it anyway.
    }
    liveOf(core.services).publish(row.user_id, {
      kind: 'delivery',
      id: row.id,
      event_id: row.event_id,
      status: nextAt ? 'queued' : 'failed',
      attempts: row.attempts,
      next_attempt_at: nextAt,
    });
    const serverSide = !permanent && !rateLimited && (status === 0 || status >= 500);
    if (isSelf) {
      log.warn({ target_id: target.id, err: message }, 'a self-monitoring notification failed; not counted');
      return;
    }
    if (serverSide) await this.monitor.targetFailed(target.user_id, target, message, status);
    // Not one of the contract's errors: a fault in the plugin (or something it did not expect); its author needs the
    // stack.
    if (code === undefined && !(err && typeof err === 'object' && loggedFaults.has(err))) {
      log.warn(
        { ...pluginFault(target.kind, err), target_id: target.id, delivery_id: row.id, attempt: row.attempts },
        `plugin "${target.kind}" threw ${errorText(err)} while delivering`,
      );
    } else
      log.warn(
        {
          plugin: target.kind,
          target_id: target.id,
          kind: target.kind,
          status_code: status,
          attempt: row.attempts,
          code,
        },
        'send failed',
      );
  }

  /** Recomputes an event's dispatch_status and details from its deliveries. */
  async refreshEvent(eventId: string): Promise<void> {
    const c = await this.core.db.tx((q) => this.refreshWith(q, eventId));
    if (!c) return;
    this.published(c);
  }

  /** Tells the event's owner's live streams that its status is recomputed (after the commit). */
  private published(c: EventChange): void {
    liveOf(this.core.services).publish(c.user_id, {
      kind: 'event',
      id: c.id,
      provider_id: c.provider_id,
      dispatch_status: c.dispatch_status,
    });
  }

  /**
   * Call inside a transaction. Deliveries of one event settle concurrently (parallel targets,
   * several replicas); each recompute holds the event row (PostgreSQL; SQLite transactions are
   * serial anyway), so the last one sees every settled delivery and a stale status never lands last.
   */
  private async refreshWith(db: Queryable, eventId: string, changes?: EventChange[]): Promise<EventChange | null> {
    const c = await recomputeEvent(db, eventId);
    if (c) changes?.push(c);
    return c;
  }
}

/** An event whose dispatch_status was recomputed: whose it is and the status now. */
export interface EventChange {
  id: string;
  user_id: string;
  provider_id: string | null;
  dispatch_status: string;
}

/**
 * An event's dispatch_status and details recomputed from its deliveries; call inside a transaction
 * (see Dispatcher.refreshWith). Also used by the event-log operations (resend, send now, drop).
 */
export async function recomputeEvent(db: Queryable, eventId: string): Promise<EventChange | null> {
  if (db.dialect === 'postgresql') await db.get('SELECT id FROM event_log WHERE id = ? FOR UPDATE', [eventId]);
  const rows = await db.all<{
    target_id: string;
    status: string;
    reason: string | null;
    last_error: string | null;
    last_status_code: number | null;
    attempts: number;
  }>('SELECT target_id, status, reason, last_error, last_status_code, attempts FROM deliveries WHERE event_id = ?', [
    eventId,
  ]);
  if (!rows.length) return null;
  const status = eventStatus(rows.map((r) => r.status));
  const details = {
    targets: rows.map((r) => ({
      target_id: r.target_id,
      status: r.status,
      attempts: r.attempts,
      ...(r.reason ? { reason: r.reason } : {}),
      ...(r.last_error ? { error: r.last_error } : {}),
      ...(r.last_status_code ? { status_code: r.last_status_code } : {}),
    })),
  };
  const owner = await db.get<{ user_id: string; provider_id: string | null }>(
    'UPDATE event_log SET dispatch_status = ?, details = ? WHERE id = ? RETURNING user_id, provider_id',
    [status, details, eventId],
  );
  if (!owner) return null;
  return { id: eventId, user_id: owner.user_id, provider_id: owner.provider_id ?? null, dispatch_status: status };
}
