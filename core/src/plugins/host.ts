import { Compile } from 'typebox/compile';
import { getAt, setSecretPointers } from '../backup/secret-paths.ts';
import type { Database } from '../db/database.ts';
import { Database as Db } from '../db/database.ts';
import type { Logger, LoggerFactory } from '../logging/logger.ts';
import { bindCredentials } from '../net/outbound.ts';
import type {
  EmittedEvent,
  MessagingBotRef,
  OutboundHttp,
  ProviderDefinition,
  ProviderInstance,
  TargetDefinition,
  TargetInstance,
  TrackerView,
} from '../plugin-api/index.ts';
import { errorCode } from '../plugin-api/index.ts';
import type { ProviderDbRow } from '../relay/definitions/provider.ts';
import type { TargetDbRow } from '../relay/definitions/target.ts';
import { webPushAccess } from '../relay/push/store.ts';
import type { SecretsAtRest } from '../secrets/at-rest.ts';
import { isProvider, isTarget, type LoadedPlugin } from './loader.ts';
import { PollTicks, pollTickMs } from './poll-ticks.ts';
import { DbInstanceStore } from './store.ts';

export interface ProviderRow {
  id: string;
  user_id: string;
  kind: string;
  name: string;
  config: Record<string, unknown>;
  enabled: boolean;
  webhook_token: string;
  updated_at: string;
  /** What an administrator lets this instance reach besides the service-wide allowance (CIDRs or host names). */
  outbound_allow?: string[];
}
export interface TargetRow {
  id: string;
  user_id: string;
  kind: string;
  name: string;
  config: Record<string, unknown>;
  locale: string;
  enabled: boolean;
  updated_at: string;
  /** As ProviderRow.outbound_allow. */
  outbound_allow?: string[];
}

/** A stored `outbound_allow` column as a list (NULL and anything unreadable: none). */
export function outboundAllowOf(v: unknown): string[] {
  const list = Db.json<unknown>(v, null);
  return Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : [];
}

/** What the relay does with what providers produce. Set once by the relay at boot. */
export interface ProviderHooks {
  emit(provider: ProviderRow, event: EmittedEvent): Promise<string[]>;
  /** After every poll: `error` undefined on success. */
  pollResult(provider: ProviderRow, trackers: TrackerView[], error?: unknown): Promise<void>;
  /** The remote rejected the credential: the instance is disabled until its config changes. */
  authFailed(provider: ProviderRow, error: Error): Promise<void>;
}

interface ProviderEntry {
  row: ProviderRow;
  plugin: LoadedPlugin & { def: ProviderDefinition };
  instance?: ProviderInstance;
  abort: AbortController;
  timer?: NodeJS.Timeout;
  /** Cancels the next scheduled poll (polls wait in {@link PollTicks}). */
  cancelPoll?: () => void;
  /** The poll running now (scheduled or asked for), which the next one waits for. */
  polling?: Promise<void>;
  failures: number;
  state: 'starting' | 'running' | 'retrying' | 'auth_failed' | 'error' | 'stopped';
  log: Logger;
  /** The first poll waits for the instance's offset into its interval (started with the others). */
  spread: boolean;
}

/** The columns of a `providers` row that {@link providerRowFrom} reads. */
export type ProviderRowSource = Pick<
  ProviderDbRow,
  'id' | 'user_id' | 'kind' | 'name' | 'config' | 'enabled' | 'webhook_token' | 'updated_at' | 'outbound_allow'
>;

/**
 * Rows converted from frozen rows (the routing configuration kept in memory, config-cache.ts): a kept row does not
 * change, so its conversion (its configuration parsed) is done once, not once an event.
 */
const converted = new WeakMap<object, ProviderRow | TargetRow>();
function once<R extends object, T extends ProviderRow | TargetRow>(r: R, convert: (r: R) => T): T {
  if (!Object.isFrozen(r)) return convert(r);
  const kept = converted.get(r) as T | undefined;
  if (kept) return kept;
  const v = convert(r);
  Object.freeze(v);
  converted.set(r, v);
  return v;
}

/** A provider's row as the host and the routes use it; a frozen (kept) row's conversion is kept with it. */
export function providerRowFrom(r: ProviderRowSource): ProviderRow {
  return once(r, providerRowOf);
}

function providerRowOf(r: ProviderRowSource): ProviderRow {
  return {
    id: r.id,
    user_id: r.user_id,
    kind: r.kind,
    name: r.name,
    config: Db.json(r.config, {}),
    enabled: Db.bool(r.enabled),
    // NOT NULL in the table.
    webhook_token: r.webhook_token ?? '',
    updated_at: r.updated_at,
    outbound_allow: outboundAllowOf(r.outbound_allow),
  };
}

/** The columns of a `targets` row that {@link targetRowFrom} reads. */
export type TargetRowSource = Pick<
  TargetDbRow,
  'id' | 'user_id' | 'kind' | 'name' | 'config' | 'locale' | 'enabled' | 'updated_at' | 'outbound_allow'
>;

/** A target's row as the host and the dispatcher use it; a frozen (kept) row's conversion is kept with it. */
export function targetRowFrom(r: TargetRowSource): TargetRow {
  return once(r, targetRowOf);
}

function targetRowOf(r: TargetRowSource): TargetRow {
  return {
    id: r.id,
    user_id: r.user_id,
    kind: r.kind,
    name: r.name,
    config: Db.json(r.config, {}),
    locale: r.locale,
    enabled: Db.bool(r.enabled),
    updated_at: r.updated_at,
    outbound_allow: outboundAllowOf(r.outbound_allow),
  };
}

const STOP_TIMEOUT_MS = 5000;

/**
 * How long after its start an instance started together with the others (at boot, or when this
 * replica takes the lead) waits for its first poll: a fraction of its interval drawn from its id
 * (FNV-1a), the same at every start. Instances started together would otherwise poll together in
 * the same second of every interval, their writes in one burst.
 */
export function firstPollDelayMs(id: string, intervalMs: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return Math.floor(((h >>> 0) / 2 ** 32) * intervalMs);
}
const MAX_BACKOFF_MS = 15 * 60_000;

/**
 * A mistake in the plugin's code rather than a state of the world: retrying cannot help. (Only for
 * `create()`: `start()` may meet a TypeError from a network library, such as fetch's "fetch failed".)
 */
export function isProgrammingError(err: unknown): boolean {
  return (
    (err instanceof TypeError || err instanceof ReferenceError || err instanceof SyntaxError) &&
    errorCode(err) === undefined
  );
}

/** How an exception from a plugin is logged: the plugin's id, the error, and its stack (kept at every log level). */
export function pluginFault(kind: string, err: unknown): { plugin: string; err: unknown; stack?: string } {
  const stack = err instanceof Error && typeof err.stack === 'string' ? err.stack : undefined;
  return { plugin: kind, err, ...(stack ? { stack } : {}) };
}

/**
 * Exceptions already logged with their stack where they were thrown (a target's create()), so the delivery's log line
 * does not repeat them.
 */
export const loggedFaults = new WeakSet<object>();

/** "TypeError: message" (or the message alone for a plain Error). */
export function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.name && err.name !== 'Error' && !err.message.startsWith(err.name)
    ? `${err.name}: ${err.message}`
    : err.message;
}

/** Instances started or stopped at once: at boot, on taking or losing the lead, when reconciling, at shutdown. */
const PROVIDER_STARTS_AT_ONCE = 16;

/**
 * Runs `fn` over `items`, at most PROVIDER_STARTS_AT_ONCE at a time. Each start writes its status twice and may wait
 * on its service (a ping), so one after another a thousand instances took ~5 s and one slow service held back every
 * instance after it; together their status writes share group commits. `done` settles once every item has been run,
 * rejecting with the first failure (the others still run); `begun` counts the items begun so far.
 */
function pooled<T>(items: readonly T[], fn: (item: T) => Promise<void>): { done: Promise<void>; begun: () => number } {
  let next = 0;
  let failed: { err: unknown } | undefined;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item).catch((err) => {
        failed ??= { err };
      });
    }
  };
  const done = Promise.all(Array.from({ length: Math.min(PROVIDER_STARTS_AT_ONCE, items.length) }, worker)).then(() => {
    if (failed) throw failed.err;
  });
  return { done, begun: () => next };
}

/**
 * How long the boot waits for its provider instances to start (readiness waits for the boot): an instance still
 * starting then (its service slow to answer) goes on starting in the background, its webhooks answered 503 meanwhile.
 */
const PROVIDER_START_WAIT_MS = 10_000;

/**
 * Runs plugin instances: one per enabled provider record (poll and stream kinds on the scheduler
 * leader only) and one per target record, created on first send. A failing instance is isolated:
 * it is marked and retried, the others keep running.
 */
export class PluginHost {
  /**
   * Every loaded plugin by `<kind>:<id>`: a provider and a target may share an id (a provider that receives a service's
   * messages beside a target that sends to it).
   */
  readonly plugins = new Map<string, LoadedPlugin>();
  private providers = new Map<string, ProviderEntry>();
  private targets = new Map<string, { key: string; instance: Promise<TargetInstance>; abort: AbortController }>();
  private hooks?: ProviderHooks;
  private db: Database;
  private logs: LoggerFactory;
  private atRest: SecretsAtRest;
  private http: OutboundHttp;
  private clock: { now(): Date };
  private isLeader: () => boolean;
  private publicUrl: () => string;
  private eventValidators = new Map<string, ReturnType<typeof Compile>>();
  private ensuring = new Map<string, Promise<void>>();
  private watchTimer?: NodeJS.Timeout;
  /** The reconcile the watch's timer started, while it runs: stopAll waits for it before the database closes. */
  private watching?: Promise<void>;
  private closed = false;
  /** Scheduled polls, those due at about the same moment started by one timer. */
  private pollTicks = new PollTicks();

  constructor(o: {
    plugins: LoadedPlugin[];
    db: Database;
    logs: LoggerFactory;
    atRest: SecretsAtRest;
    http: OutboundHttp;
    clock: { now(): Date };
    isLeader: () => boolean;
    publicUrl: () => string;
  }) {
    for (const p of o.plugins) this.plugins.set(`${p.kind}:${p.id}`, p);
    this.db = o.db;
    this.logs = o.logs;
    this.atRest = o.atRest;
    this.http = o.http;
    this.clock = o.clock;
    this.isLeader = o.isLeader;
    this.publicUrl = o.publicUrl;
  }

  setHooks(h: ProviderHooks): void {
    this.hooks = h;
  }

  /** Adds (or replaces) a loaded plugin under its kind and id; tests use it to load one at run time. */
  add(p: LoadedPlugin): void {
    this.plugins.set(`${p.kind}:${p.id}`, p);
  }

  provider(kind: string): (LoadedPlugin & { def: ProviderDefinition }) | undefined {
    const p = this.plugins.get(`provider:${kind}`);
    return p && isProvider(p) ? p : undefined;
  }

  target(kind: string): (LoadedPlugin & { def: TargetDefinition }) | undefined {
    const p = this.plugins.get(`target:${kind}`);
    return p && isTarget(p) ? p : undefined;
  }

  /**
   * The values of an instance's `Secret()` fields join the log masker before the instance runs, so
   * a plugin that logs a URL, an error text or a header carrying one never prints it. Returns them.
   */
  private maskSecretValues(plugin: LoadedPlugin, config: Record<string, unknown>): string[] {
    const values: string[] = [];
    for (const pointer of setSecretPointers(config, plugin.secretPaths)) {
      const v = getAt(config, pointer);
      if (typeof v === 'string') {
        this.logs.secrets.add(v);
        values.push(v);
      }
    }
    return values;
  }

  /**
   * The outbound client one instance receives as `ctx.http`: the shared client (one pool) bound
   * to the plugin's declared credential headers and the instance's secret values, so a redirect
   * to another origin carries none of them, and given the instance's own outbound allow list (what
   * an administrator lets this one provider or target reach). Built once per instance.
   */
  private instanceHttp(plugin: LoadedPlugin, secrets: string[], allow?: string[]): OutboundHttp {
    return bindCredentials(this.http, { headers: plugin.def.manifest.credentialHeaders, secrets }, allow);
  }

  /** Validates an emitted event against its declared type and payload schema. */
  validateEvent(kind: string, event: EmittedEvent): string | undefined {
    const spec = this.provider(kind)?.def.manifest.events?.[event.type];
    if (!spec) return `event type "${event.type}" is not declared by plugin "${kind}"`;
    const key = `${kind}:${event.type}`;
    let v = this.eventValidators.get(key);
    if (!v) {
      v = Compile(spec.payload as never);
      this.eventValidators.set(key, v);
    }
    if (!v.Check(event.payload))
      return `payload of "${event.type}" is invalid: ${[...v.Errors(event.payload)]
        .slice(0, 5)
        .map((e) => `${e.instancePath || '/'} ${e.message}`)
        .join('; ')}`;
    return undefined;
  }

  webhookUrl(row: { webhook_token: string }): string {
    return `${this.publicUrl()}/api/hooks/${row.webhook_token}`;
  }

  private leaderOnly(p: LoadedPlugin & { def: ProviderDefinition }): boolean {
    const ingest = p.def.manifest.ingest;
    return ingest === 'poll' || ingest === 'stream';
  }

  /** Starts every enabled provider's instance; resolves once all have started, or after `waitMs` (see the constant). */
  async startProviders(o: { waitMs?: number } = {}): Promise<void> {
    const rows = await this.db.all<ProviderDbRow>('SELECT * FROM providers WHERE enabled = ? ORDER BY id', [true]);
    const { done: all, begun } = pooled(rows, (r) => this.startProvider(providerRowFrom(r), { spread: true }));
    const waitMs = o.waitMs ?? PROVIDER_START_WAIT_MS;
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      all.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), waitMs);
      }),
    ]).finally(() => clearTimeout(timer));
    if (!waited) return;
    this.logs
      .get('plugins')
      .warn(
        { waited_ms: waitMs, not_begun: rows.length - begun() },
        'provider instances still starting; going on without them',
      );
    all.catch((err) => this.logs.get('plugins').error({ err }, 'starting provider instances failed'));
  }

  /**
   * (Re)starts the instance of one provider record; a no-op for disabled records and unknown kinds.
   * A poll kind polls at once when started, or, with `spread` (every instance starting together, at
   * boot or on taking the lead), at its own offset into its interval ({@link firstPollDelayMs}).
   */
  async startProvider(row: ProviderRow, o: { spread?: boolean } = {}): Promise<void> {
    await this.stopProvider(row.id);
    const plugin = this.provider(row.kind);
    if (!plugin || !row.enabled || this.closed) return;
    if (this.leaderOnly(plugin) && !this.isLeader()) return;
    const entry: ProviderEntry = {
      row,
      plugin,
      abort: new AbortController(),
      failures: 0,
      state: 'starting',
      log: this.logs.get(`plugin.${row.kind}`, { provider_id: row.id }),
      spread: o.spread === true,
    };
    this.providers.set(row.id, entry);
    await this.boot(entry);
  }

  /** Records the state in the database first, so that whoever sees the new state in memory also reads it there. */
  private async setStatus(entry: ProviderEntry, state: ProviderEntry['state'], detail?: string): Promise<void> {
    await this.db
      .run('UPDATE providers SET status = ?, status_detail = ? WHERE id = ?', [state, detail ?? null, entry.row.id])
      .catch(() => {});
    if (!entry.abort.signal.aborted) entry.state = state;
  }

  private async boot(entry: ProviderEntry): Promise<void> {
    const { row, plugin } = entry;
    let opened: Record<string, unknown>;
    try {
      opened = this.atRest.openConfig(row.config, plugin.secretPaths, 'a secret of this provider');
    } catch (err) {
      await this.setStatus(entry, 'error', (err as Error).message);
      return;
    }
    const cfg = plugin.validateConfig(opened, { undeclared: 'drop' });
    if (!cfg.ok) {
      await this.setStatus(
        entry,
        'error',
        `configuration invalid: ${cfg.errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
      );
      return;
    }
    const http = this.instanceHttp(plugin, this.maskSecretValues(plugin, cfg.value), row.outbound_allow);
    const store = new DbInstanceStore(this.db, row.id, () => this.clock.now(), this.atRest);
    let created = false;
    try {
      entry.instance = await plugin.def.create({
        instanceId: row.id,
        ownerId: row.user_id,
        config: cfg.value,
        log: entry.log,
        http,
        store,
        clock: this.clock,
        signal: entry.abort.signal,
        webhookUrl: plugin.def.manifest.ingest === 'webhook' ? this.webhookUrl(row) : undefined,
        emit: (event) => {
          if (!this.hooks) throw new Error('relay is not running');
          return this.hooks.emit(row, event);
        },
        trackers: () => this.trackerViews(row.id, row.kind),
      });
      created = true;
      await entry.instance.start?.();
      if (entry.abort.signal.aborted) return;
      entry.failures = 0;
      await this.setStatus(entry, 'running');
      if (plugin.def.manifest.ingest === 'poll' && entry.instance.poll)
        this.schedulePoll(entry, entry.spread ? firstPollDelayMs(row.id, this.intervalMs(entry)) : 0, true);
      entry.spread = false;
    } catch (err) {
      await this.startFailed(entry, err, created ? 'start' : 'create');
    }
  }

  private async startFailed(
    entry: ProviderEntry,
    err: unknown,
    stage: 'create' | 'start' | 'poll' = 'start',
  ): Promise<void> {
    if (entry.abort.signal.aborted) return;
    const code = errorCode(err);
    const msg = (err as Error)?.message ?? String(err);
    if (stage === 'create' && isProgrammingError(err)) {
      // A bug in the plugin: no retry would go better. The record shows it until its config changes or the service
      // restarts.
      await this.setStatus(
        entry,
        'error',
        `the plugin failed to start: ${errorText(err)} (a programming error in the plugin; not retried ` +
          'until the provider is changed or the service restarts)',
      );
      entry.log.warn(
        pluginFault(entry.row.kind, err),
        `create() of plugin "${entry.row.kind}" threw ${errorText(err)}; the provider is marked error and not retried`,
      );
      return;
    }
    // Anything that is not one of the contract's errors is unexpected: the author needs the stack.
    if (code === undefined && stage !== 'poll' && entry.failures === 0) {
      entry.log.warn(
        pluginFault(entry.row.kind, err),
        `${stage}() of plugin "${entry.row.kind}" threw ${errorText(err)}; retrying in the background`,
      );
    }
    if (code === 'AUTH_FAILED') {
      await this.setStatus(entry, 'auth_failed', msg);
      entry.log.warn({ err }, 'credential rejected; instance disabled until its configuration changes');
      await this.hooks?.authFailed(entry.row, err as Error);
      return;
    }
    if (code === 'CONFIG') {
      await this.setStatus(entry, 'error', msg);
      entry.log.error({ err }, 'configuration error');
      return;
    }
    // NotReadyError and anything unexpected: retry in the background with backoff.
    entry.failures++;
    const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(entry.failures, 10)) * (0.8 + Math.random() * 0.4);
    await this.setStatus(entry, 'retrying', msg);
    if (entry.failures === 1 && code !== undefined)
      entry.log.warn({ err }, 'instance not ready; retrying in the background');
    entry.timer = setTimeout(() => {
      if (!entry.abort.signal.aborted) void this.boot(entry);
    }, delay);
    entry.timer.unref();
  }

  /**
   * The next poll of `entry`, at the tick nearest `delayMs` from now ({@link PollTicks}; `notBefore`: the first poll,
   * not before its offset), with the other polls due in that tick.
   */
  private schedulePoll(entry: ProviderEntry, delayMs: number, notBefore = false): void {
    entry.cancelPoll?.();
    entry.cancelPoll = this.pollTicks.schedule(
      delayMs,
      pollTickMs(this.intervalMs(entry)),
      () => {
        entry.cancelPoll = undefined;
        void this.pollOnce(entry);
      },
      notBefore,
    );
  }

  private intervalMs(entry: ProviderEntry): number {
    const fromConfig = Number((entry.row.config as { poll_interval_seconds?: unknown }).poll_interval_seconds);
    const s =
      Number.isFinite(fromConfig) && fromConfig > 0
        ? fromConfig
        : (entry.plugin.def.manifest.pollIntervalSeconds ?? 60);
    return s * 1000;
  }

  /**
   * One poll of one provider, reporting the outcome. Exposed for tests and for "poll now". Polls of
   * one instance never overlap: two at once would both see the same change and both report it, so a
   * poll asked for while another runs starts when that one ends (it may have read the state before
   * the change this one is asked to see).
   */
  async pollOnce(entry: ProviderEntry | string): Promise<void> {
    const e = typeof entry === 'string' ? this.providers.get(entry) : entry;
    if (!e?.instance?.poll || e.abort.signal.aborted) return;
    const run = (e.polling ?? Promise.resolve()).then(
      () => this.pollNow(e),
      () => this.pollNow(e),
    );
    e.polling = run;
    try {
      await run;
    } finally {
      if (e.polling === run) e.polling = undefined;
    }
  }

  private async pollNow(e: ProviderEntry): Promise<void> {
    if (!e.instance?.poll || e.abort.signal.aborted) return;
    if (e.timer) clearTimeout(e.timer);
    e.cancelPoll?.();
    e.cancelPoll = undefined;
    let trackers: TrackerView[] = [];
    let error: unknown;
    try {
      trackers = (await this.trackerViews(e.row.id, e.row.kind)).filter((t) => t.enabled);
      if (trackers.length) await e.instance.poll({ trackers, signal: e.abort.signal });
    } catch (err) {
      error = err;
    }
    if (e.abort.signal.aborted) return;
    await this.hooks
      ?.pollResult(e.row, trackers, error)
      .catch((err) => e.log.error({ err }, 'recording poll result failed'));
    if (error && errorCode(error) === 'AUTH_FAILED') {
      await this.startFailed(e, error, 'poll');
      return;
    }
    e.failures = error ? e.failures + 1 : 0;
    const base = this.intervalMs(e);
    const next = error ? Math.min(MAX_BACKOFF_MS, base * 2 ** Math.min(e.failures - 1, 6)) : base;
    this.schedulePoll(e, next);
  }

  /** The trackers of a provider as its plugin sees them (secrets opened). Throws SecretUnreadableError. */
  async trackerViews(providerId: string, kind: string): Promise<TrackerView[]> {
    const rows = await this.db.all<{ id: string; name: string; enabled: unknown; config: unknown }>(
      'SELECT id, name, enabled, config FROM trackers WHERE provider_id = ? ORDER BY id',
      [providerId],
    );
    const paths = this.provider(kind)?.trackerSecretPaths ?? [];
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      enabled: Db.bool(r.enabled),
      config: this.atRest.openConfig(
        Db.json<Record<string, unknown>>(r.config, {}),
        paths,
        `a secret of tracker "${r.name}"`,
      ),
    }));
  }

  runningProvider(id: string):
    | {
        row: ProviderRow;
        instance?: ProviderInstance;
        state: string;
        plugin: LoadedPlugin & { def: ProviderDefinition };
      }
    | undefined {
    return this.providers.get(id);
  }

  async stopProvider(id: string, timeoutMs = STOP_TIMEOUT_MS): Promise<void> {
    const entry = this.providers.get(id);
    if (!entry) return;
    this.providers.delete(id);
    entry.abort.abort();
    if (entry.timer) clearTimeout(entry.timer);
    entry.cancelPoll?.();
    entry.cancelPoll = undefined;
    await withTimeout(Promise.resolve(entry.instance?.stop?.()), timeoutMs).catch((err) =>
      entry.log.warn({ err }, 'stop failed or timed out'),
    );
    entry.state = 'stopped';
  }

  /**
   * Makes the local instance of a provider match its record: started when missing, restarted when
   * the record changed (another replica may have created or edited it). Concurrent calls for one
   * provider share one start. Resolves with the local entry, if any.
   */
  async ensureProvider(
    row: ProviderRow,
    o: { spread?: boolean } = {},
  ): Promise<ReturnType<PluginHost['runningProvider']>> {
    const current = this.providers.get(row.id);
    if (current && current.row.updated_at === row.updated_at) return current;
    let p = this.ensuring.get(row.id);
    if (!p) {
      p = this.startProvider(row, o).finally(() => this.ensuring.delete(row.id));
      this.ensuring.set(row.id, p);
    }
    await p;
    return this.providers.get(row.id);
  }

  /**
   * Brings the running instances in line with the providers table: starts what is missing or
   * changed, stops what was deleted or disabled, and keeps poll and stream kinds on the leader
   * only. With several replicas this is how a change made through one replica reaches the others.
   */
  async reconcile(o: { spread?: boolean } = {}): Promise<void> {
    const rows = await this.db.all<{ id: string; kind: string; updated_at: string }>(
      'SELECT id, kind, updated_at FROM providers WHERE enabled = ?',
      [true],
    );
    const wanted = new Set<string>();
    const changed = new Set<string>();
    for (const r of rows) {
      const plugin = this.provider(r.kind);
      if (!plugin || (this.leaderOnly(plugin) && !this.isLeader())) continue;
      wanted.add(r.id);
      const current = this.providers.get(r.id);
      if (!current || current.row.updated_at !== r.updated_at) changed.add(r.id);
    }
    // The changed rows in full, in one read of the enabled ones (rare but for taking the lead, when most have
    // changed); then a few at a time, as at boot: on taking the lead, every poll and stream instance starts here.
    if (changed.size) {
      const full = await this.db.all<ProviderDbRow>('SELECT * FROM providers WHERE enabled = ?', [true]);
      const starts = full.filter((row) => changed.has(row.id));
      await pooled(starts, (row) => this.ensureProvider(providerRowFrom(row), o).then(() => {})).done;
    }
    const gone = [...this.providers.keys()].filter((id) => !wanted.has(id) && !this.ensuring.has(id));
    await pooled(gone, (id) => this.stopProvider(id)).done;
  }

  /** Reconciles every `intervalMs` until stopAll (multi-replica deployments). */
  watch(intervalMs: number): void {
    if (this.watchTimer) return;
    this.watchTimer = setInterval(() => {
      if (this.watching) return;
      this.watching = this.reconcile()
        .catch((err) => this.logs.get('plugins').warn({ err }, 'reconciling provider instances failed'))
        .finally(() => {
          this.watching = undefined;
        });
    }, intervalMs);
    this.watchTimer.unref();
  }

  /** Leadership moved: start or stop the poll and stream instances. */
  async leadershipChanged(leader: boolean): Promise<void> {
    if (leader) {
      await this.reconcile({ spread: true });
      return;
    }
    const leaderOnly = [...this.providers].filter(([, e]) => this.leaderOnly(e.plugin)).map(([id]) => id);
    await pooled(leaderOnly, (id) => this.stopProvider(id)).done;
  }

  /** The instance for a target record, created on first use and recreated when the record changes. */
  async targetInstance(row: TargetRow): Promise<TargetInstance> {
    const key = `${row.id}@${row.updated_at}`;
    const cached = this.targets.get(row.id);
    if (cached && cached.key === key) return cached.instance;
    if (cached) {
      cached.abort.abort();
      void cached.instance.then((i) => i.stop?.()).catch(() => {});
    }
    const plugin = this.target(row.kind);
    if (!plugin) throw Object.assign(new Error(`target kind "${row.kind}" is not enabled`), { code: 'CONFIG' });
    const abort = new AbortController();
    const instance = (async () => {
      const cfg = plugin.validateConfig(
        this.atRest.openConfig(row.config, plugin.secretPaths, 'a secret of this target'),
        { undeclared: 'drop' },
      );
      const secrets = cfg.ok ? this.maskSecretValues(plugin, cfg.value) : [];
      if (!cfg.ok)
        throw Object.assign(
          new Error(`target configuration invalid: ${cfg.errors.map((e) => `${e.path} ${e.message}`).join('; ')}`),
          { code: 'CONFIG' },
        );
      let bot: MessagingBotRef | undefined;
      const botId = (cfg.value as { bot_id?: string }).bot_id;
      if (botId) {
        const b = await this.db.get<{
          id: string;
          token: string;
          bot_id: string | null;
          username: string | null;
          api_root: string | null;
        }>('SELECT id, token, bot_id, username, api_root FROM bots WHERE id = ? AND user_id = ?', [botId, row.user_id]);
        if (!b) throw Object.assign(new Error('the messaging bot of this target no longer exists'), { code: 'CONFIG' });
        bot = {
          id: b.id,
          token: this.atRest.open(b.token, "the token of this target's messaging bot"),
          botId: b.bot_id ?? undefined,
          username: b.username ?? undefined,
          apiRoot: b.api_root ?? undefined,
        };
      }
      const log = this.logs.get(`plugin.${row.kind}`, { target_id: row.id });
      const inst = await Promise.resolve()
        .then(() =>
          plugin.def.create({
            instanceId: row.id,
            ownerId: row.user_id,
            config: cfg.value,
            log,
            // The bot token is a credential of this instance too (Telegram puts it in every URL path).
            http: this.instanceHttp(plugin, bot ? [...secrets, bot.token] : secrets, row.outbound_allow),
            store: new DbInstanceStore(this.db, row.id, () => this.clock.now(), this.atRest),
            clock: this.clock,
            signal: abort.signal,
            bot,
            // The owner's subscribed browsers and the VAPID keys, read when the plugin asks (the webpush kind does).
            webPush: webPushAccess(
              {
                db: this.db,
                atRest: this.atRest,
                clock: this.clock,
                publicUrl: this.publicUrl,
                mask: (v) => this.logs.secrets.add(v),
              },
              row.user_id,
            ),
          }),
        )
        .catch((err: unknown) => {
          if (errorCode(err) === undefined) {
            log.warn(pluginFault(row.kind, err), `create() of plugin "${row.kind}" threw ${errorText(err)}`);
            if (err && typeof err === 'object') loggedFaults.add(err);
          }
          throw err;
        });
      await inst.start?.();
      return inst;
    })();
    this.targets.set(row.id, { key, instance, abort });
    instance.catch(() => {
      if (this.targets.get(row.id)?.key === key) this.targets.delete(row.id);
    });
    return instance;
  }

  async dropTarget(id: string, timeoutMs = STOP_TIMEOUT_MS): Promise<void> {
    const t = this.targets.get(id);
    if (!t) return;
    this.targets.delete(id);
    t.abort.abort();
    await withTimeout(
      t.instance.then((i) => i.stop?.()),
      timeoutMs,
    ).catch(() => {});
  }

  /** Aggregated plugin readiness checks (e.g. `ha`): `ok` when one instance is healthy, `degraded` otherwise. */
  async readinessChecks(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const p of this.plugins.values()) if (p.def.manifest.readinessCheck) out[p.def.manifest.readinessCheck] = 'na';
    const byCheck = new Map<string, boolean[]>();
    for (const e of this.providers.values()) {
      const check = e.plugin.def.manifest.readinessCheck;
      if (!check) continue;
      let ok = false;
      try {
        ok =
          e.state === 'running' &&
          (await withTimeout(Promise.resolve(e.instance?.health?.() ?? { status: 'ok' as const }), 1000)).status ===
            'ok';
      } catch {
        ok = false;
      }
      byCheck.set(check, [...(byCheck.get(check) ?? []), ok]);
    }
    for (const [check, oks] of byCheck) out[check] = oks.some(Boolean) ? 'ok' : 'degraded';
    return out;
  }

  /**
   * Stops every instance, in reverse start order, each with a timeout, and all of them within
   * `budgetMs` when given (shutdown): once it is spent, the rest are aborted without waiting.
   */
  async stopAll(budgetMs = Number.POSITIVE_INFINITY): Promise<void> {
    const end = Date.now() + budgetMs;
    const left = () => Math.max(0, Math.min(STOP_TIMEOUT_MS, end - Date.now()));
    this.closed = true;
    clearInterval(this.watchTimer);
    this.watchTimer = undefined;
    if (this.watching) await withTimeout(this.watching, left()).catch(() => {});
    await withTimeout(Promise.allSettled([...this.ensuring.values()]), left()).catch(() => {});
    // Sixteen at a time, so that a slow stop holds back no other instance's.
    await pooled([...this.providers.keys()].reverse(), (id) => this.stopProvider(id, left())).done;
    await pooled([...this.targets.keys()].reverse(), (id) => this.dropTarget(id, left())).done;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    t.unref();
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}
