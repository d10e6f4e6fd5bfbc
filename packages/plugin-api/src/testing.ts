/**
 * A test host for plugin authors: run a provider or target outside the service with a fake clock,
 * an in-memory store, captured emits and an outbound client that may reach loopback fakes.
 *
 * @example
 * ```ts
 * const host = createTestHost();
 * const { instance, emitted } = await host.provider(myPlugin, { api_key: 'k' }, { trackers: [{ id: 't1', name: 'A', enabled: true, config: {} }] });
 * await instance.poll!({ trackers: host.trackers, signal: host.signal });
 * ```
 */
import { Value } from 'typebox/value';
import type {
  Clock, EmittedEvent, InstanceStore, OutboundHttp, PluginLogger, ProviderDefinition, ProviderInstance,
  TargetDefinition, TargetInstance, TrackerView, MessagingBotRef, OutboundMessage, ConfigProblem,
} from './index.ts';
import { createTestHttp } from './testing-http.ts';

export { createTestHttp } from './testing-http.ts';
export type { TestHttpOptions } from './testing-http.ts';

export class FakeClock implements Clock {
  private t: number;
  constructor(start: Date | string = '2026-01-01T00:00:00Z') { this.t = new Date(start).getTime(); }
  now(): Date { return new Date(this.t); }
  set(at: Date | string): void { this.t = new Date(at).getTime(); }
  advance(ms: number): void { this.t += ms; }
}

export class MemoryStore implements InstanceStore {
  readonly data = new Map<string, { value: unknown; expires?: number }>();
  private clock: Clock;
  constructor(clock: Clock = { now: () => new Date() }) { this.clock = clock; }
  private live(key: string) {
    const e = this.data.get(key);
    if (e && e.expires !== undefined && e.expires <= this.clock.now().getTime()) { this.data.delete(key); return undefined; }
    return e;
  }
  async get<T>(key: string): Promise<T | undefined> { return this.live(key)?.value as T | undefined; }
  async set(key: string, value: unknown, o?: { ttlSeconds?: number }): Promise<void> {
    this.data.set(key, { value: structuredClone(value), expires: o?.ttlSeconds ? this.clock.now().getTime() + o.ttlSeconds * 1000 : undefined });
  }
  async setIfAbsent(key: string, value: unknown, o?: { ttlSeconds?: number }): Promise<boolean> {
    if (this.live(key)) return false;
    await this.set(key, value, o);
    return true;
  }
  async delete(key: string): Promise<void> { this.data.delete(key); }
}

export interface CapturedLog { level: string; obj: unknown; msg?: string }

export function captureLogger(lines: CapturedLog[] = []): PluginLogger & { lines: CapturedLog[] } {
  const mk = (level: string) => (obj: unknown, msg?: string) => { lines.push({ level, obj, msg }); };
  const l = { lines, debug: mk('debug'), info: mk('info'), warn: mk('warn'), error: mk('error'), child: () => l };
  return l;
}

export interface TestHostOptions {
  clock?: FakeClock;
  /** Outbound client; default `createTestHttp()`, which allows every address (tests talk to loopback fakes). */
  http?: OutboundHttp;
}

export interface ProviderHarness {
  instance: ProviderInstance;
  emitted: EmittedEvent[];
  trackers: TrackerView[];
  store: MemoryStore;
  log: ReturnType<typeof captureLogger>;
  abort: AbortController;
}

export interface TargetHarness {
  instance: TargetInstance;
  store: MemoryStore;
  log: ReturnType<typeof captureLogger>;
  abort: AbortController;
  /** Builds a message the way the pipeline would, with defaults for the fields not given. */
  message(m?: Partial<OutboundMessage>): OutboundMessage;
}

/** Validates config against the manifest's schema (with defaults), the way the core does. */
export function validateConfig<T>(schema: unknown, config: unknown): T {
  const withDefaults = Value.Default(schema as never, structuredClone(config ?? {}));
  const errors = [...Value.Errors(schema as never, withDefaults)];
  if (errors.length) throw new Error(`invalid config: ${errors.map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ')}`);
  return withDefaults as T;
}

/**
 * Checks a config the way the core does when it is saved through the API or restored from a
 * backup: the schema with defaults (throws when it fails), then the plugin's `validateConfig`
 * hook, whose problems are returned (empty when the config is accepted).
 */
export function checkConfig(def: ProviderDefinition<any, any> | TargetDefinition<any>, config: unknown): ConfigProblem[] {
  const cfg = validateConfig<Record<string, unknown>>(def.manifest.configSchema, config);
  return def.validateConfig ? def.validateConfig(cfg) : [];
}

/**
 * Checks an event the way the core does before recording it: its type is declared in the
 * manifest and its payload matches the type's schema. Throws an Error naming what is wrong.
 */
export function checkEvent(def: ProviderDefinition<any, any>, e: EmittedEvent): void {
  const spec = def.manifest.events?.[e.type];
  if (!spec) throw new Error(`event type ${e.type} is not declared by ${def.manifest.id}`);
  const errs = [...Value.Errors(spec.payload as never, e.payload)];
  if (errs.length) throw new Error(`payload of ${e.type} is invalid: ${errs.map((x) => `${x.instancePath} ${x.message}`).join('; ')}`);
}

export function createTestHost(opts: TestHostOptions = {}) {
  const clock = opts.clock ?? new FakeClock();
  const http = opts.http ?? createTestHttp();
  let n = 0;
  return {
    clock,
    http,
    async provider(def: ProviderDefinition<any, any>, config: unknown, o: { trackers?: TrackerView[]; instanceId?: string; ownerId?: string; webhookUrl?: string } = {}): Promise<ProviderHarness> {
      const emitted: EmittedEvent[] = [];
      const trackers = o.trackers ?? [];
      const store = new MemoryStore(clock);
      const log = captureLogger();
      const abort = new AbortController();
      const cfg = validateConfig(def.manifest.configSchema, config);
      const instance = await def.create({
        instanceId: o.instanceId ?? `test-${++n}`, ownerId: o.ownerId ?? 'owner', config: cfg, log, http, store, clock,
        signal: abort.signal, webhookUrl: o.webhookUrl,
        async emit(e) {
          checkEvent(def, e);
          emitted.push(e);
          return [`evt-${emitted.length}`];
        },
        async trackers() { return trackers; },
      });
      if (instance.handleWebhook) {
        // Mirror the core: a returned replay key is remembered once the delivery is accepted.
        const handle = instance.handleWebhook.bind(instance);
        instance.handleWebhook = async (req) => {
          const r = await handle(req);
          // Like the core: every returned event must be a declared type with a valid payload.
          for (const e of r.events ?? []) checkEvent(def, e);
          if (r.replayKey) await store.set(r.replayKey.key, 1, { ttlSeconds: r.replayKey.ttlSeconds });
          return r;
        };
      }
      return { instance, emitted, trackers, store, log, abort };
    },
    async target(def: TargetDefinition<any>, config: unknown, o: { bot?: MessagingBotRef; instanceId?: string } = {}): Promise<TargetHarness> {
      const store = new MemoryStore(clock);
      const log = captureLogger();
      const abort = new AbortController();
      const cfg = validateConfig(def.manifest.configSchema, config);
      const instance = await def.create({ instanceId: o.instanceId ?? `test-${++n}`, ownerId: 'owner', config: cfg, log, http, store, clock, signal: abort.signal, bot: o.bot });
      const format = def.manifest.limits?.formats[0] ?? 'text';
      return {
        instance, store, log, abort,
        message: (m = {}) => ({
          deliveryId: `del-${++n}`, eventId: 'evt-1', eventType: 'test', severity: 'info', locale: 'en', format,
          title: 'Title', body: 'Body', plainTitle: m.title ?? 'Title', plainBody: m.body ?? 'Body', ...m,
        }),
      };
    },
  };
}
