/**
 * A test host for plugin authors: run a provider or target outside the service with a fake clock,
 * an in-memory store, captured emits and an outbound client that may reach loopback fakes.
 *
 * @example
 * ```ts
 * const host = createTestHost();
 * const { instance, emitted } = await host.provider(myPlugin, { api_key: 'k' }, {
 *   trackers: [{ id: 't1', name: 'A', enabled: true, config: {} }],
 * });
 * await instance.poll!({ trackers: host.trackers, signal: host.signal });
 * ```
 */
import crypto from 'node:crypto';
import { Value } from 'typebox/value';
import { undeclaredFields } from './config-fields.ts';
import { type CredentialBinding, secretValues } from './credentials.ts';
import { WebhookRejectedError } from './errors.ts';
import { fitMessage, plainOf } from './fit.ts';
import type {
  Clock,
  ConfigProblem,
  DialectAnswer,
  EmittedEvent,
  InstanceStore,
  MessagingBotRef,
  OutboundHttp,
  OutboundMessage,
  PluginLogger,
  ProviderDefinition,
  ProviderInstance,
  StoreSetOptions,
  TargetDefinition,
  TargetInstance,
  TrackerView,
  WebhookResult,
  WebPushAccess,
  WebPushSubscription,
} from './index.ts';
import { createTestHttp } from './testing-http.ts';
import { jsonTooDeep, MAX_JSON_DEPTH } from './webhook-helpers.ts';

export type { CredentialBinding } from './credentials.ts';
export type { TestHttp, TestHttpOptions } from './testing-http.ts';
export { createTestHttp } from './testing-http.ts';

export class FakeClock implements Clock {
  private t: number;
  constructor(start: Date | string = '2026-01-01T00:00:00Z') {
    this.t = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.t);
  }
  set(at: Date | string): void {
    this.t = new Date(at).getTime();
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

export class MemoryStore implements InstanceStore {
  readonly data = new Map<string, { value: unknown; expires?: number }>();
  /** The keys whose last `set` asked for the value to be sealed at rest (a test asserts the plugin asks). */
  readonly sealedKeys = new Set<string>();
  private clock: Clock;
  constructor(clock: Clock = { now: () => new Date() }) {
    this.clock = clock;
  }
  private live(key: string) {
    const e = this.data.get(key);
    if (e && e.expires !== undefined && e.expires <= this.clock.now().getTime()) {
      this.data.delete(key);
      return undefined;
    }
    return e;
  }
  async get<T>(key: string): Promise<T | undefined> {
    return this.live(key)?.value as T | undefined;
  }
  async set(key: string, value: unknown, o?: StoreSetOptions): Promise<void> {
    this.data.set(key, {
      value: structuredClone(value),
      expires: o?.ttlSeconds ? this.clock.now().getTime() + o.ttlSeconds * 1000 : undefined,
    });
    if (o?.sealed) this.sealedKeys.add(key);
    else this.sealedKeys.delete(key);
  }
  async setIfAbsent(key: string, value: unknown, o?: { ttlSeconds?: number }): Promise<boolean> {
    if (this.live(key)) return false;
    await this.set(key, value, o);
    return true;
  }
  async delete(key: string): Promise<void> {
    this.data.delete(key);
    this.sealedKeys.delete(key);
  }
}

export interface CapturedLog {
  level: string;
  obj: unknown;
  msg?: string;
}

export function captureLogger(lines: CapturedLog[] = []): PluginLogger & { lines: CapturedLog[] } {
  const mk = (level: string) => (obj: unknown, msg?: string) => {
    lines.push({ level, obj, msg });
  };
  const l = { lines, debug: mk('debug'), info: mk('info'), warn: mk('warn'), error: mk('error'), child: () => l };
  return l;
}

export interface TestHostOptions {
  clock?: FakeClock;
  /**
   * Outbound client; default `createTestHttp()`, which allows every address (tests talk to loopback
   * fakes). Each instance gets it bound to the manifest's `credentialHeaders` and the instance's
   * `Secret()` values (and bot token), as in the service, when it has a `bind` method as
   * `createTestHttp()`'s clients do; another client is handed over as it is.
   */
  http?: OutboundHttp;
}

/** `http` bound to an instance's credentials when it can be. */
function bound(http: OutboundHttp, binding: CredentialBinding): OutboundHttp {
  const bind = (http as { bind?: (b: CredentialBinding) => OutboundHttp }).bind;
  return typeof bind === 'function' ? bind.call(http, binding) : http;
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
  /**
   * Builds a message the way the pipeline would, with defaults for the fields not given, fitted to
   * the manifest's `limits` as the core fits it: a title beyond `maxTitleLength` cut with `…`, a body
   * beyond `maxMessageLength` truncated, or with `overflow: 'split'` the first of its parts (see
   * {@link parts}); `overflow: 'plugin'` leaves it whole. Without `plainTitle`/`plainBody`, the plain
   * copies are the title and body without their markup (Markdown escapes, HTML tags).
   */
  message(m?: Partial<OutboundMessage>, o?: MessageOptions): OutboundMessage;
  /** Every message the pipeline would send for this one: one, or each part of a split body, in order. */
  parts(m?: Partial<OutboundMessage>, o?: MessageOptions): OutboundMessage[];
}

export interface MessageOptions {
  /**
   * `false`: the message as given, not fitted to the limits (to test what `send()` does with a body
   * the core would not pass it, e.g. a limit your channel counts in bytes). Default `true`.
   */
  fit?: boolean;
}

/**
 * Validates config against the manifest's schema (with defaults), the way the core does when a
 * config is saved: a field the schema does not declare is refused too, whatever the schema says
 * about `additionalProperties` (nested objects where the schema lists their fields).
 */
export function validateConfig<T>(schema: unknown, config: unknown): T {
  const undeclared = undeclaredFields(schema, config ?? {});
  if (undeclared.length)
    throw new Error(`invalid config: ${undeclared.map((p) => `${p} is not a field of this configuration`).join('; ')}`);
  const withDefaults = Value.Default(schema as never, structuredClone(config ?? {}));
  const errors = [...Value.Errors(schema as never, withDefaults)];
  if (errors.length)
    throw new Error(`invalid config: ${errors.map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ')}`);
  return withDefaults as T;
}

/**
 * Checks a config the way the core does when it is saved through the API or restored from a
 * backup: the schema with defaults (throws when it fails), then the plugin's `validateConfig`
 * hook, whose problems are returned (empty when the config is accepted).
 */
export function checkConfig(
  def: ProviderDefinition<any, any> | TargetDefinition<any>,
  config: unknown,
): ConfigProblem[] {
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
  if (errs.length)
    throw new Error(`payload of ${e.type} is invalid: ${errs.map((x) => `${x.instancePath} ${x.message}`).join('; ')}`);
}

export function createTestHost(opts: TestHostOptions = {}) {
  const clock = opts.clock ?? new FakeClock();
  const http = opts.http ?? createTestHttp();
  let n = 0;
  return {
    clock,
    http,
    async provider(
      def: ProviderDefinition<any, any>,
      config: unknown,
      o: { trackers?: TrackerView[]; instanceId?: string; ownerId?: string; webhookUrl?: string } = {},
    ): Promise<ProviderHarness> {
      const emitted: EmittedEvent[] = [];
      const trackers = o.trackers ?? [];
      const store = new MemoryStore(clock);
      const log = captureLogger();
      const abort = new AbortController();
      const cfg = validateConfig(def.manifest.configSchema, config);
      const instanceHttp = bound(http, {
        headers: def.manifest.credentialHeaders,
        secrets: secretValues(def.manifest.configSchema, cfg),
      });
      const instance = await def.create({
        instanceId: o.instanceId ?? `test-${++n}`,
        ownerId: o.ownerId ?? 'owner',
        config: cfg,
        log,
        http: instanceHttp,
        store,
        clock,
        signal: abort.signal,
        webhookUrl: o.webhookUrl,
        async emit(e) {
          checkEvent(def, e);
          emitted.push(e);
          return [`evt-${emitted.length}`];
        },
        async trackers() {
          return trackers;
        },
      });
      if (instance.handleWebhook) {
        // Mirror the core: verifyWebhook first (headers only, then with the body when it asks for
        // it), a parsed body held to the depth bound, and a returned replay key refused when the store
        // already holds it (409, since 1.4.0), else remembered once the delivery is accepted.
        const handle = instance.handleWebhook.bind(instance);
        const verify = instance.verifyWebhook?.bind(instance);
        instance.handleWebhook = async (req) => {
          if (verify) {
            const { rawBody, body: _body, ...headersOnly } = req;
            let verdict = await verify(headersOnly);
            if (verdict === 'needs_body') verdict = await verify({ ...headersOnly, rawBody });
            if (verdict !== 'ok')
              throw new WebhookRejectedError(401, `verifyWebhook answered ${String(verdict)} where the core needs ok`);
          }
          if (req.body !== undefined && jsonTooDeep(req.rawBody))
            throw new WebhookRejectedError(400, `the request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
          const r = await handle(req);
          // Like the core: every returned event must be a declared type with a valid payload.
          for (const e of r.events ?? []) checkEvent(def, e);
          if (r.replayKey) {
            if ((await store.get(r.replayKey.key)) !== undefined)
              throw new WebhookRejectedError(409, 'delivery already processed');
            await store.set(r.replayKey.key, 1, { ttlSeconds: r.replayKey.ttlSeconds });
          }
          return r;
        };
      }
      return { instance, emitted, trackers, store, log, abort };
    },
    async target(
      def: TargetDefinition<any>,
      config: unknown,
      o: { bot?: MessagingBotRef; instanceId?: string; webPush?: WebPushAccess } = {},
    ): Promise<TargetHarness> {
      const store = new MemoryStore(clock);
      const log = captureLogger();
      const abort = new AbortController();
      const cfg = validateConfig(def.manifest.configSchema, config);
      const secrets = [...secretValues(def.manifest.configSchema, cfg), ...(o.bot?.token ? [o.bot.token] : [])];
      const instanceHttp = bound(http, { headers: def.manifest.credentialHeaders, secrets });
      const instance = await def.create({
        instanceId: o.instanceId ?? `test-${++n}`,
        ownerId: 'owner',
        config: cfg,
        log,
        http: instanceHttp,
        store,
        clock,
        signal: abort.signal,
        bot: o.bot,
        webPush: o.webPush,
      });
      const format = def.manifest.limits?.formats[0] ?? 'text';
      const parts = (m: Partial<OutboundMessage> = {}, opts: MessageOptions = {}): OutboundMessage[] => {
        const f = m.format ?? format;
        const title = m.title ?? 'Title';
        const body = m.body ?? 'Body';
        const whole: OutboundMessage = {
          deliveryId: `del-${++n}`,
          eventId: 'evt-1',
          eventType: 'test',
          severity: 'info',
          locale: 'en',
          format: f,
          title,
          body,
          plainTitle: plainOf(f, title),
          plainBody: plainOf(f, body),
          ...m,
        };
        return opts.fit === false ? [whole] : fitMessage(whole, def.manifest.limits);
      };
      return { instance, store, log, abort, parts, message: (m = {}, opts = {}) => parts(m, opts)[0]! };
    },
  };
}

/**
 * What {@link dialectRequest} saw: the token the route found, the plugin's result, and the answer the core would
 * send.
 */
export interface DialectOutcome {
  /** The token the route's finder returned (undefined when it found none). */
  token?: string;
  /** The HTTP status the core would answer with. */
  status: number;
  /** The body the client would get: the plugin's `respond` (success) or `errorBody` (refusal), when it has one. */
  answer?: DialectAnswer;
  /** The plugin's webhook result, when the request got that far. */
  result?: WebhookResult;
  /** The refusal, when the request was refused: Herald's problem code and sentence. */
  refusal?: { status: number; code: string; detail: string };
}

/**
 * Sends a request through one of a provider's dialect routes (`manifest.webhook.routes`) the way
 * the core does, without a service: the route's token finder (headers first, then with the body
 * when it answers `needs_body`), the instance's `handleWebhook` (as the test host wraps it: verify,
 * depth, event checks), then the route's answer, `respond` with made-up event ids, or `errorBody`
 * for a refusal. It does not look the token up: check `token` yourself.
 *
 * @example
 * ```ts
 * const { instance } = await host.provider(plugin, {});
 * const out = await dialectRequest(plugin, instance, {
 *   path: '/api/compat/gotify/message',
 *   headers: { 'x-gotify-key': 'tok', 'content-type': 'application/json' },
 *   body: '{"message":"hi"}',
 * });
 * // out.token === 'tok', out.status === 200, out.answer.body.id is a number
 * ```
 */
export async function dialectRequest(
  def: ProviderDefinition<any, any>,
  instance: ProviderInstance,
  o: {
    path: string;
    method?: 'POST' | 'PUT';
    params?: Record<string, string>;
    headers?: Record<string, string>;
    query?: Record<string, string>;
    body?: string | Buffer;
    ip?: string;
  },
): Promise<DialectOutcome> {
  const method = o.method ?? 'POST';
  const route = def.manifest.webhook?.routes?.find((r) => r.path === o.path && r.method === method);
  if (!route) throw new Error(`${def.manifest.id} declares no dialect route ${method} ${o.path}`);
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(o.headers ?? {})) headers[k.toLowerCase()] = v;
  const params = o.params ?? {};
  const query = o.query ?? {};
  const rawBody = Buffer.isBuffer(o.body) ? o.body : Buffer.from(o.body ?? '', 'utf8');
  const refuse = (status: number, code: string, detail: string): DialectOutcome => {
    const answer = route.errorBody?.({ status, code, detail }, { headers });
    return { status: answer?.status ?? status, answer, refusal: { status, code, detail } };
  };
  let token: string | undefined;
  try {
    let found = route.token({ method, params, headers, query });
    if (found === 'needs_body') found = route.token({ method, params, headers, query, rawBody });
    if (!found || found === 'needs_body') return refuse(401, 'unauthorized', 'The request carries no token.');
    token = found;
    const maxBody = def.manifest.webhook?.maxBodyBytes ?? 1024 * 1024;
    if (rawBody.length > maxBody)
      return { ...refuse(413, 'body_too_large', `The body is larger than ${maxBody} bytes.`), token };
    const ctype = headers['content-type'] ?? '';
    let body: unknown;
    if (rawBody.length && (ctype.includes('json') || ctype === '')) {
      if (jsonTooDeep(rawBody))
        return {
          ...refuse(400, 'json_too_deep', `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`),
          token,
        };
      try {
        body = JSON.parse(rawBody.toString('utf8'));
      } catch {
        body = undefined;
      }
    }
    if (!instance.handleWebhook) throw new Error(`${def.manifest.id} has no handleWebhook`);
    const result = await instance.handleWebhook({
      method,
      headers,
      rawBody,
      body,
      query,
      ip: o.ip ?? '192.0.2.1',
      route: { path: route.path, params },
    });
    const eventIds = result.events.map((_, i) => `0190a5d1-7c00-7000-8000-${String(i + 1).padStart(12, '0')}`);
    const answer = result.respond?.({ eventIds });
    return { token, status: answer?.status ?? (result.events.length ? 200 : (result.status ?? 200)), answer, result };
  } catch (err) {
    if (!(err instanceof Error) || (err as { code?: unknown }).code !== 'WEBHOOK_REJECTED') throw err;
    const status = (err as unknown as { status: number }).status;
    return {
      ...refuse(status, status === 401 ? 'unauthorized' : status === 409 ? 'replayed' : 'bad_request', err.message),
      token,
    };
  }
}

/** A {@link WebPushAccess} for tests, with what the target did to it. */
export interface TestWebPush extends WebPushAccess {
  /** The subscriptions left (the target's `remove` takes them out). */
  readonly subscribed: WebPushSubscription[];
  /** Ids passed to `remove`, in order. */
  readonly removed: string[];
  /** Ids passed to `markSuccess`, in order. */
  readonly succeeded: string[];
  readonly keys: { publicKey: string; privateKey: string; subject: string };
}

/**
 * The core's Web Push facility as a test sees it: the given subscriptions (e.g. made by a fake
 * push service), a VAPID key pair generated here unless given, and records of removals and
 * successes. Pass it to `host.target(def, config, { webPush })`.
 *
 * @example
 * ```ts
 * const webPush = createTestWebPush({ subscriptions: [fake.subscribe(keys.publicKey)] });
 * const { instance, message } = await host.target(plugin, {}, { webPush });
 * ```
 */
export function createTestWebPush(
  o: {
    subscriptions?: WebPushSubscription[];
    vapid?: { publicKey: string; privateKey: string; subject?: string };
    eventUrl?: (eventId: string) => string;
  } = {},
): TestWebPush {
  let keys = o.vapid;
  if (!keys) {
    const ecdh = crypto.createECDH('prime256v1');
    ecdh.generateKeys();
    const priv = ecdh.getPrivateKey();
    keys = {
      publicKey: ecdh.getPublicKey().toString('base64url'),
      privateKey: Buffer.concat([Buffer.alloc(32 - priv.length), priv]).toString('base64url'),
    };
  }
  const full = {
    publicKey: keys.publicKey,
    privateKey: keys.privateKey,
    subject: keys.subject ?? 'mailto:push@example.test',
  };
  const subscribed = [...(o.subscriptions ?? [])];
  const removed: string[] = [];
  const succeeded: string[] = [];
  return {
    subscribed,
    removed,
    succeeded,
    keys: full,
    async vapid() {
      return { ...full };
    },
    async subscriptions() {
      return subscribed.map((s) => ({ ...s, keys: { ...s.keys } }));
    },
    async remove(id) {
      removed.push(id);
      const at = subscribed.findIndex((s) => s.id === id);
      if (at >= 0) subscribed.splice(at, 1);
    },
    async markSuccess(id) {
      succeeded.push(id);
    },
    eventUrl: o.eventUrl ?? ((eventId) => `https://herald.example.test/#/events?event=${encodeURIComponent(eventId)}`),
  };
}
