/**
 * The Herald plugin contract (`@herald/plugin-api`): the only package a provider or target imports.
 *
 * @example A minimal provider
 * ```ts
 * import { defineProvider, Type, Secret } from '@herald/plugin-api';
 * export default defineProvider({
 *   manifest: {
 *     id: 'example', kind: 'provider', apiVersion: 1, displayName: 'Example',
 *     configSchema: Type.Object({ api_key: Secret() }),
 *     events: {
 *       thing_happened: { payload: Type.Object({ name: Type.String() }), quietHours: 'defer', severity: 'info' },
 *     },
 *     templates: { en: { thing_happened: { title: 'Thing', body: '{{name}} happened' } } },
 *   },
 *   create: (ctx) => ({ async poll() { await ctx.emit({ type: 'thing_happened', payload: { name: 'x' } }); } }),
 * });
 * ```
 */

import type { Static, TSchema } from 'typebox';
import Type from 'typebox';

export { undeclaredFields, withoutFields } from './config-fields.ts';
export type { CredentialBinding } from './credentials.ts';
export {
  Credentials,
  HEADER_NAME,
  MIN_EMBEDDED_SECRET_LENGTH,
  ORIGIN_BOUND_HEADERS,
  secretValues,
  UNBOUND,
} from './credentials.ts';
export * from './errors.ts';
/**
 * How the core fits a message to a target's `limits` (also what the test host's `message()` does),
 * and the Markdown dialect it escapes values for. A target with `overflow: 'plugin'` may reuse
 * `splitFormatted` for its own parts.
 */
export {
  fitMessage,
  htmlToPlain,
  MARKDOWN_ESCAPED,
  markdownToPlain,
  partMarker,
  plainOf,
  splitFormatted,
  truncateFormatted,
} from './fit.ts';
export * from './locales.ts';
export type { FormFieldKind, PluginIssue, PluginValidation, ValidatePluginOptions } from './validate.ts';
/** The checks the core runs when it loads a plugin; run them in your tests. */
export { formFieldKind, RESERVED_FIELDS, validatePlugin } from './validate.ts';
export {
  hmacSha256Hex,
  jsonBody,
  jsonTooDeep,
  MAX_JSON_DEPTH,
  parseJsonBounded,
  safeEqual,
} from './webhook-helpers.ts';
export type { Static, TSchema };
export { Type };

import type { PluginLocales } from './locales.ts';

/** The contract version this core speaks. A plugin whose manifest says otherwise is refused at load. */
export const PLUGIN_API_VERSION = 1 as const;

/** Key that marks a schema field as secret: masked in API responses and logs, left out of backups by default. */
export const SECRET_KEY = 'x-secret';

/** A secret string field. One walk of the schema drives log redaction, API masking and backup exclusion. */
export const Secret = (options: Record<string, unknown> = {}) => Type.String({ ...options, [SECRET_KEY]: true });

export type Locale = 'en' | 'ru';
export const LOCALES: readonly Locale[] = ['en', 'ru'];
export type Severity = 'info' | 'warning' | 'critical';
/**
 * What an event type does during a tracker's quiet hours:
 * `defer` waits in the deferred queue until the window ends, `send` goes out at once,
 * `drop` is recorded as dropped (worthless once stale).
 */
export type QuietHoursPolicy = 'defer' | 'send' | 'drop';
export type MessageFormat = 'text' | 'markdown' | 'html';

/** One event type a provider emits. */
export interface EventSpec<P extends TSchema = TSchema> {
  /** TypeBox schema of the payload; every emitted payload is validated against it. */
  payload: P;
  quietHours: QuietHoursPolicy;
  severity: Severity;
  description?: string;
  /**
   * A sample payload (valid against `payload`) for "send a test event": the operator's test goes
   * through the normal pipeline with it, so every template can be seen as it will arrive. Optional;
   * without it the core builds a sample from the schema's defaults (empty strings, zeros).
   */
  example?: Record<string, unknown>;
  /**
   * Declares that this event type describes the state of something (a CI run, a UPS, a pull
   * request) so that a target can update the message it sent for an earlier event about the same
   * thing instead of posting a new one. See {@link CorrelationSpec}. Optional: without it every
   * event is a message of its own.
   */
  correlation?: CorrelationSpec;
}

/**
 * How the core tells that two events are about the same thing. The key is computed from the
 * payload; events of the same provider instance whose event types share a `thread` and whose keys
 * are equal follow one message per target: the first is sent, the later ones edit it (or reply to
 * it where the target cannot edit).
 *
 * @example A UPS on battery, then back on line: one message, edited
 * ```ts
 * const correlation = { key: ['server', 'ups'], thread: 'power' };
 * ups_on_battery: { payload, quietHours: 'send', severity: 'critical', correlation },
 * ups_online: { payload, quietHours: 'send', severity: 'info', correlation },
 * ```
 */
export interface CorrelationSpec {
  /**
   * Payload paths (dot-separated, e.g. `run.id`) whose values together form the key, or a
   * function of the payload. A missing or empty value (or a function answering `undefined`, `null`
   * or `''`) leaves that event uncorrelated: it is sent as a new message.
   */
  key: string[] | ((payload: Record<string, unknown>) => string | number | undefined | null);
  /**
   * Event types of the same provider with the same thread name share keys (e.g. `power` for
   * `ups_on_battery` and `ups_online`). Default: the event type's own name.
   */
  thread?: string;
}

/** A notification template: `{{path}}` substitutions, `{{#each list}}…{{/each}}`, `{{#if x}}…{{else}}…{{/if}}`. */
export interface TemplateText {
  title: string;
  body: string;
}
/** Default templates per locale and event type. English is the fallback for every locale. */
export type TemplateSet = Partial<Record<Locale, Record<string, TemplateText>>>;

/** Limits of a target channel, declared as data so the pipeline can fit messages to them. */
export interface TargetLimits {
  /**
   * Longest body the channel accepts, in UTF-16 code units of the body as sent (markup included).
   * The core fits every message to it according to `overflow` before `send()` sees it.
   */
  maxMessageLength: number;
  /** Longest title the channel accepts; the core cuts a longer one and ends it with `…`. */
  maxTitleLength?: number;
  /**
   * What the core does with a body longer than `maxMessageLength` (default `truncate`):
   * - `truncate`: cut at a line break or space where one is near, end with `…`;
   * - `split`: send it as several messages, in order, each ending with a part marker in the target's
   *   locale ("(part 2 of 3)"); a retry never sends a part again once the channel accepted it;
   * - `plugin`: the plugin fits long bodies itself (its own splitter, service-specific counting);
   *   the core passes them whole.
   *
   * Cuts never land inside an HTML tag or entity or a surrogate pair; HTML tags open at a cut are
   * closed there (and opened again in the next part), as is a Markdown code fence.
   */
  overflow?: 'truncate' | 'split' | 'plugin';
  /** Formats the channel renders, preferred first. */
  formats: MessageFormat[];
  /**
   * Sends per second the channel tolerates for one destination (one target instance). Enforced by
   * the core: sends to the instance are spaced at least `1 / ratePerSecond` seconds apart (with a
   * small margin), across every replica, and survive restarts (the pace is kept in the database).
   * Deliveries waiting for their turn stay in the durable queue; none is dropped. Each part of a
   * split message counts as one send. Leave it out when the channel has no fixed pace.
   */
  ratePerSecond?: number;
  /**
   * With `ratePerSecond`: sends allowed back to back before pacing starts (the size of the
   * channel's token bucket). Default 1: every send is paced.
   */
  burst?: number;
  /**
   * Sends to one target the core may have in flight at once (default 1: strictly one after
   * another). Sends still start in event order; deliveries released when quiet hours end always
   * go one at a time. At most 32.
   */
  concurrency?: number;
}

export interface WebhookSpec {
  /**
   * Requests per minute accepted from one source address, counted over every provider of this
   * plugin together (429 with Retry-After beyond). Each replica counts on its own.
   */
  rateLimitPerMinute?: number;
  /** Largest accepted body in bytes (413 beyond). Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * Random bytes of each new provider's webhook token (default 32: 43 base64url characters;
   * 12–48). A dialect whose clients cap the token's length asks for fewer: Apprise limits an
   * Apprise API key to 32 characters, which 24 bytes give. Tokens already issued stay as they are.
   */
  tokenBytes?: number;
  /**
   * Routes in another service's own wire format ("dialect"), so that the apps and scripts made
   * for that service post to Herald unchanged (a Gotify app, an ntfy publisher, the Apprise API).
   * Each request on one is handled like `POST /api/hooks/{token}` with a provider of this plugin:
   * the same rate limit, disabled-record refusal, body limits (declared, then measured, before
   * parsing), JSON depth check, `verifyWebhook`, payload log and durable events before the
   * answer; the route only says where its token is and how its answers look. See {@link DialectRoute}.
   */
  routes?: DialectRoute[];
  /**
   * What the user pastes into the sending app, when it is more than the webhook URL (a server
   * address and a token in separate fields, an `apprise://` URL). The providers API answers
   * `webhook_url` with `url` and `webhook_connection` with `fields`, each labelled from the
   * plugin's locale files (`connection.<key>.label`), and `webhook_example` with `example`. See
   * {@link WebhookConnection}. `env` says what else the service offers (its SMTP listener); a hook
   * written for two arguments keeps working.
   */
  connection?(publicUrl: string, token: string, env?: ConnectionEnv): WebhookConnection;
}

/** What the service tells a {@link WebhookSpec.connection} hook besides its public URL and the token. */
export interface ConnectionEnv {
  /** The provider's webhook URL, `<public URL>/api/hooks/<token>`. */
  webhookUrl: string;
  /**
   * The SMTP listener (for a plugin declaring `mail`), present only when `SERVICE_SMTP_PORT` turns
   * it on: the host a device sends mail to (the listener's own address, or the public URL's host
   * when it listens on every interface) and its port. Absent: mail cannot reach the service.
   */
  smtp?: { host: string; port: number };
}

/**
 * A request on a {@link DialectRoute}, as its `token` finder sees it: first before the body is
 * read, then (only when the first call answered `needs_body`) with the body's exact bytes.
 */
export interface DialectRequest {
  method: string;
  /** The route's path parameters, e.g. `{ topic: '…' }` for `/:topic`. */
  params: Record<string, string>;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  query: Record<string, string>;
  /** The body's exact bytes: present only in the second call. Parse with `parseJsonBounded`. */
  rawBody?: Buffer;
}

/**
 * An answer in the dialect's own format: a success built by {@link WebhookResult.respond}, a
 * refusal by {@link DialectRoute.errorBody}. An object body is sent as JSON, a string as text.
 */
export interface DialectAnswer {
  /** Default 200 for a success; a refusal keeps the status the core decided when absent. */
  status?: number;
  body: unknown;
  /** Default `application/json` for an object, `text/plain; charset=utf-8` for a string. */
  contentType?: string;
  headers?: Record<string, string>;
}

/**
 * One route of a service's dialect (see {@link WebhookSpec.routes}). The core registers it for
 * every enabled plugin declaring it; it must not take a path another route has (the boot fails).
 *
 * @example Gotify's message endpoint, token in a header, the query or a bearer header
 * ```ts
 * routes: [{
 *   method: 'POST', path: '/api/compat/gotify/message', summary: 'Gotify: create a message',
 *   token: (req) =>
 *     req.query.token || req.headers['x-gotify-key'] || /^bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1],
 *   unknownToken: 401,
 *   errorBody: ({ status, detail }) => ({
 *     body: { error: STATUS_TEXT[status], errorCode: status, errorDescription: detail },
 *   }),
 * }],
 * ```
 */
export interface DialectRoute {
  method: 'POST' | 'PUT';
  /**
   * Absolute Fastify path, e.g. `/api/compat/gotify/message`, `/api/compat/apprise/notify/:token`,
   * `/:topic(^[-_A-Za-z0-9]{16,64}$)` or `/`. A parameter may carry a regular expression in
   * parentheses: the route then matches only such segments (a root route must, so that it never
   * takes the web client's paths), and only such segments are masked in logs.
   */
  path: string;
  /** One line for the OpenAPI document. */
  summary: string;
  description?: string;
  /** Path parameters that are the token (or part of it): masked in every logged URL. */
  credentialParams?: string[];
  /**
   * Where the provider's `webhook_token` is in the request: the token, `undefined` when the request
   * carries none (answered 401), or `needs_body` when it is in the body (the core reads the body,
   * within `maxBodyBytes`, and calls again with `rawBody`). Throw `WebhookRejectedError` to refuse
   * (e.g. 400 for a body that is not the dialect's JSON). A token that names no provider of this
   * plugin's kind is answered `unknownToken`. The core masks the token found in the payload log.
   */
  token(req: DialectRequest): string | undefined | 'needs_body';
  /** Status for a token that names no provider of this plugin (default 404; 401 where the service says so). */
  unknownToken?: 401 | 404;
  /**
   * The dialect's shape of a refusal (the core's 401, 404, 409, 413, 429, 503 and the plugin's
   * own `WebhookRejectedError`s), where its clients read it. `code` is Herald's problem code,
   * `detail` its English sentence. Without it, refusals are Herald's problem details.
   */
  errorBody?(
    refusal: { status: number; code: string; detail: string },
    req: { headers: Record<string, string | undefined> },
  ): DialectAnswer;
}

/** What the user pastes into the sending app; see {@link WebhookSpec.connection}. */
export interface WebhookConnection {
  /**
   * The one address that works as it is (a topic URL, a URL with the token in its query).
   * Default: the provider's webhook URL.
   */
  url?: string;
  /**
   * The values an app asks for one by one, in its order: `key` names the value (stable; labelled
   * by the locale files' `connection.<key>.label`), `value` is what to paste. Mark the token
   * `secret` so that a client can hide it until asked.
   */
  fields?: { key: string; value: string; secret?: boolean }[];
  /**
   * A ready-to-run command (usually `curl`) that sends one test notification, shown with a copy
   * button: e.g. `curl -d "Backup done" https://herald.example/<topic>`. One line, sample text in
   * English; it may carry the token (a client hides the secret fields' values in it until asked).
   * Without it, the web client shows a JSON POST only for a kind whose payload is free-form.
   */
  example?: string;
}

/**
 * The self-monitoring signals the core raises, with the payload it sends for each. The core keeps
 * the counters, thresholds and latch (per user, in the database); the receiving plugin names the
 * event types and declares their payload schemas, which must accept these payloads.
 */
export interface SelfMonitoringSignals {
  /**
   * Consecutive failed polls of one tracker reached the user's threshold; the counter resets after.
   * Also raised at once, with `failures` and `threshold` 1, when a provider's credential is rejected.
   */
  pollFailures: {
    tracker_id?: string;
    tracker_name?: string;
    provider_id?: string;
    provider_name?: string;
    provider_kind?: string;
    failures: number;
    threshold: number;
    last_error?: string;
  };
  /**
   * The user's pending deferred notifications reached the threshold; raised once until the count falls below it
   * again.
   */
  deferredBacklog: { pending: number; threshold: number };
  /** Consecutive 5xx or network failures to one target reached the threshold; the counter resets after. */
  targetFailures: {
    target_id: string;
    target_name: string;
    target_kind: string;
    failures: number;
    threshold: number;
    last_error?: string;
    status_code?: number;
  };
}

export type SelfMonitoringSignal = keyof SelfMonitoringSignals;

/**
 * Declared by the one core-managed provider that receives self-monitoring signals. The core then:
 * creates one instance per user (with the user, and at boot for users lacking one), named after the
 * manifest's `displayName`, with one tracker of the same name; keeps its thresholds and switches
 * (`/api/self-monitoring`); raises each signal as the event type mapped here, through the same
 * ingest path as `ctx.emit`; and does not count failed sends of these events toward the target
 * failure threshold. The instance cannot be created or deleted through the providers API.
 */
export interface SelfMonitoringSpec {
  /** The event type (declared in the manifest's `events`) raised for each signal. */
  events: { [S in SelfMonitoringSignal]: string };
}

export interface PluginManifest<C extends TSchema = TSchema, T extends TSchema = TSchema> {
  /** Stable kind id, unique across plugins, e.g. `immich`, `telegram`. Stored in records: never rename it. */
  id: string;
  kind: 'provider' | 'target';
  apiVersion: typeof PLUGIN_API_VERSION;
  displayName: string;
  description?: string;
  /** TypeBox schema of the instance configuration; the single source of types, defaults and validation. */
  configSchema: C;
  /** Provider: schema of the per-tracker options (albums followed, entity filters…). */
  trackerSchema?: T;
  /** Provider: the event types it emits. */
  events?: Record<string, EventSpec>;
  /**
   * Provider: how changes arrive. `poll` has the core call `poll()` on an interval, `stream` keeps a
   * long-lived connection opened in `start()`, `webhook` receives `handleWebhook()`, `internal` is fed by the core.
   * `poll` and `stream` instances run on the elected scheduler replica only.
   */
  ingest?: 'poll' | 'webhook' | 'stream' | 'internal';
  /** Provider with `ingest: 'poll'`: default seconds between polls (config `poll_interval_seconds` overrides). */
  pollIntervalSeconds?: number;
  webhook?: WebhookSpec;
  /**
   * Provider: its instances also receive email through the core's SMTP listener (on when the
   * operator sets `SERVICE_SMTP_PORT`), addressed `<webhook_token>@<any domain>`. See {@link MailSpec}.
   */
  mail?: MailSpec;
  /** Target: channel limits. */
  limits?: TargetLimits;
  /** Default templates shipped with the plugin. */
  templates?: TemplateSet;
  /**
   * Readiness check this plugin's instances feed (e.g. `ha`): `na` without instances, `ok` if one is healthy, else
   * `degraded`.
   */
  readinessCheck?: string;
  /** Created and owned by the core (one per user), not through the providers API. */
  coreManaged?: boolean;
  /**
   * Provider: names of config fields (each a top-level property of `configSchema`) that the providers
   * API also accepts and answers at the top level of the record, beside `config`: documented
   * aliases such as the generic webhook's `auth_mode`. A value sent at the top level wins over the one
   * in `config`; a replacement `config` that leaves an alias out keeps its stored value; responses
   * carry each alias with its value from the config. The core stores only the config.
   */
  configAliases?: string[];
  /**
   * Request headers that carry this plugin's credentials, e.g. `['x-api-key']` (any case). The
   * outbound client handed to each instance (`ctx.http`) drops them, together with
   * `authorization`, `cookie` and `proxy-authorization` (always dropped), whenever a redirect
   * leads to another origin (scheme, host or port differs): when a server answers 302 to
   * somewhere else, the key does not go along. Same-origin redirects keep every header.
   *
   * Declare every header your plugin puts a credential in; a request can add more with
   * {@link OutboundRequestInit.credentialHeaders}. As a backstop the client also treats as a
   * credential any header whose value contains one of the instance's `Secret()` values (a value
   * shorter than 8 characters only when it is the whole header value), and refuses to follow a
   * redirect to another origin whose URL contains one (a token in the path or query) with
   * `OUTBOUND_REDIRECTS`. The backstop cannot see derived values (a Basic credential, a signature):
   * declaring the header is what the contract promises.
   *
   * @example
   * ```ts
   * manifest: { id: 'acme', credentialHeaders: ['x-api-key'], configSchema: Type.Object({ api_key: Secret() }), … }
   * ```
   */
  credentialHeaders?: string[];
  /**
   * Provider with `coreManaged: true` and `ingest: 'internal'`: this plugin receives the core's
   * self-monitoring signals. See {@link SelfMonitoringSpec}. At most one enabled plugin may declare it.
   */
  selfMonitoring?: SelfMonitoringSpec;
  /**
   * The plugin's words per language (`locales/en.json` required, imported with
   * `with { type: 'json' }`): display name, description, field labels and hints, option labels,
   * event descriptions. `GET /api/plugins` answers in the caller's language from these, English
   * string by string where a translation is missing. Format: see {@link PluginLocaleStrings}.
   */
  locales?: PluginLocales;
}

/** A pino-compatible logger; secrets are already redacted by the core. */
export interface PluginLogger {
  debug(obj: unknown, msg?: string, ...args: unknown[]): void;
  info(obj: unknown, msg?: string, ...args: unknown[]): void;
  warn(obj: unknown, msg?: string, ...args: unknown[]): void;
  error(obj: unknown, msg?: string, ...args: unknown[]): void;
  child(bindings: Record<string, unknown>): PluginLogger;
}

/** Options of {@link InstanceStore.set}. */
export interface StoreSetOptions {
  /** The key expires this many seconds from now (then reads as absent). */
  ttlSeconds?: number;
  /**
   * Sealed at rest (since 1.3.0): the host encrypts the value with the service's secret key before it
   * writes it, and re-encrypts it when the operator rotates that key. For what the plugin makes
   * itself and must keep secret, such as a device's private keys or a token it obtained; secrets the
   * operator types belong in `Secret()` config fields instead. `get` returns the clear value; it
   * throws an error with code `CONFIG` when no configured key opens the stored one.
   */
  sealed?: boolean;
}

/** A small persistent key/value store private to one plugin instance. Values are JSON. */
export interface InstanceStore {
  get<T = unknown>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown, options?: StoreSetOptions): Promise<void>;
  /** Atomically sets the key only when absent (or expired); true when this call set it. For replay protection. */
  setIfAbsent(key: string, value: unknown, options?: StoreSetOptions): Promise<boolean>;
  delete(key: string): Promise<void>;
}

export interface Clock {
  now(): Date;
}

export interface OutboundRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Convenience: JSON-encodes the value and sets content-type. */
  json?: unknown;
  /** Total time limit; default 15 s. */
  timeoutMs?: number;
  /** Connect time limit; default 5 s. */
  connectTimeoutMs?: number;
  /** Response body cap in bytes; default 4 MiB. */
  maxResponseBytes?: number;
  /** Redirects followed by hand, each destination validated again; default 5, 0 refuses redirects. */
  maxRedirects?: number;
  /**
   * Headers of this request that carry credentials, beyond the manifest's
   * {@link PluginManifest.credentialHeaders}: dropped when a redirect leads to another origin.
   * For a header only some requests send; declare the ones every request sends in the manifest.
   */
  credentialHeaders?: string[];
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string>;
  /** Final URL after redirects. */
  url: string;
  body: Uint8Array;
  text(): string;
  json<T = unknown>(): T;
}

/**
 * The SSRF-safe outbound client. Every request resolves the host once, refuses private, loopback,
 * link-local, CGNAT and unique-local addresses unless the operator allows them, pins the resolved
 * address for the connection, follows redirects by hand and always has timeouts. The client an
 * instance receives is bound to its credentials: a redirect to another origin drops its
 * credential headers and is refused when its URL carries a secret (see
 * {@link PluginManifest.credentialHeaders}).
 */
export interface OutboundHttp {
  request(url: string | URL, init?: OutboundRequestInit): Promise<OutboundResponse>;
  /** A WHATWG `fetch` with the same protections, for libraries that take a custom fetch. */
  fetch: typeof fetch;
  /**
   * For non-HTTP protocols (WebSocket, raw TCP): resolves `host` and checks the address against the
   * policy. Connect to the returned address (not the name) so it cannot change underneath.
   */
  resolveAllowed(host: string): Promise<{ address: string; family: 4 | 6 }>;
}

/** An event a provider hands to the core. */
export interface EmittedEvent {
  type: string;
  payload: Record<string, unknown>;
  /** Restrict the event to these trackers of the provider (e.g. the ones following an album). */
  trackerIds?: string[];
  /** When it happened at the source; default now. */
  occurredAt?: Date;
  /** Extra strings available to templates as `extras.*` (redacted like payload excerpts). */
  extras?: Record<string, string>;
  /** Overrides the event type's declared severity for this one event (e.g. mapped from a generic webhook). */
  severity?: Severity;
}

export interface TrackerView<T = Record<string, unknown>> {
  id: string;
  name: string;
  enabled: boolean;
  config: T;
}

export interface BaseContext<C> {
  /** Id of this plugin instance (the provider or target record). */
  readonly instanceId: string;
  readonly ownerId: string;
  readonly config: C;
  readonly log: PluginLogger;
  readonly http: OutboundHttp;
  readonly store: InstanceStore;
  readonly clock: Clock;
  /** Aborted when the instance is stopped. */
  readonly signal: AbortSignal;
}

export interface ProviderContext<C, T = Record<string, unknown>> extends BaseContext<C> {
  /** Validates, records and dispatches an event. Resolves with the event_log ids once durable. */
  emit(event: EmittedEvent): Promise<string[]>;
  /** The provider's trackers as they are now. */
  trackers(): Promise<TrackerView<T>[]>;
  /** Public URL of this provider's inbound webhook, when the kind takes webhooks. */
  readonly webhookUrl?: string;
}

export interface PollContext<T = Record<string, unknown>> {
  trackers: TrackerView<T>[];
  signal: AbortSignal;
}

/**
 * An inbound webhook request as {@link ProviderInstance.verifyWebhook} sees it: before the core
 * parses the body, and in the first call before it has even read it.
 */
export interface WebhookAuthRequest {
  method: string;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  query: Record<string, string>;
  /** Client address, honouring forwarded-for only from trusted proxies. */
  ip: string;
  /**
   * The exact bytes received: absent in the first call (headers only), present in the second,
   * made only when the first answered `needs_body`. Verify signatures over these bytes.
   */
  rawBody?: Buffer;
}

/**
 * What {@link ProviderInstance.verifyWebhook} decided: `ok` (authentic, or accepted without
 * authentication by the instance's configuration) or `needs_body` (the proof covers the body,
 * e.g. an HMAC of it: call again with the raw bytes). A refusal is thrown as `WebhookRejectedError`.
 */
export type WebhookVerdict = 'ok' | 'needs_body';

/** An inbound webhook request as {@link ProviderInstance.handleWebhook} sees it. */
export interface InboundWebhook {
  method: string;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  /** The exact bytes received; verify signatures over this. */
  rawBody: Buffer;
  /**
   * The parsed JSON body (nested at most {@link MAX_JSON_DEPTH} deep: the core refuses deeper bodies
   * with 400), or undefined when the body is not JSON. Parse anything else with `parseJsonBounded`.
   */
  body: unknown;
  query: Record<string, string>;
  /** Client address, honouring forwarded-for only from trusted proxies. */
  ip: string;
  /**
   * The {@link DialectRoute} the request came in on (its declared `path` and the matched path
   * parameters); absent on `POST /api/hooks/{token}`.
   */
  route?: { path: string; params: Record<string, string> };
}

export interface WebhookResult {
  /** HTTP status when no event was produced (e.g. 200 for a ping). With events the core answers 202. */
  status?: number;
  body?: unknown;
  events: EmittedEvent[];
  /**
   * Replay protection without losing events: the plugin returns the key here (e.g. the sender's
   * delivery id) and does not store it; the core stores it only once the events are durable, so a
   * delivery that failed to record can be retried by its sender. Since 1.4.0 the core refuses a
   * delivery whose key it already holds itself (409 `replayed`), atomically with the events' write,
   * so the plugin need not check `ctx.store.get(key)` first; a plugin that must also run on an older
   * Herald keeps that check (409 when present), which is harmless on 1.4.0.
   */
  replayKey?: { key: string; ttlSeconds: number };
  /**
   * On a {@link DialectRoute}: the answer in the dialect's format, built once the events are
   * durable from the ids they were recorded under (empty when nothing was recorded), e.g.
   * Gotify's message object. Called only after the commit, so a 2xx still means "durable".
   * `POST /api/hooks/{token}` ignores it and answers as always.
   */
  respond?(recorded: { eventIds: string[] }): DialectAnswer;
}

export interface HealthReport {
  status: 'ok' | 'degraded' | 'error';
  detail?: string;
}

export interface Lifecycle {
  /** Open connections, validate credentials. Throw NotReadyError to be retried in the background. */
  start?(): Promise<void> | void;
  /** Close everything; called in reverse start order with a timeout. */
  stop?(): Promise<void> | void;
  health?(): Promise<HealthReport> | HealthReport;
}

/**
 * Declared (as `manifest.mail`) by a provider that receives email through the core's SMTP listener.
 * The core runs one listener for every such plugin when the operator sets `SERVICE_SMTP_PORT`; a
 * message reaches the provider whose `webhook_token` is the local part of a recipient
 * (`<webhook_token>@<any domain>`, matched case-insensitively as some senders lower-case addresses).
 * Declare `ingest: 'webhook'` as well: the provider then shows its token as its webhook URL and
 * backups treat it as a secret. The core owns the SMTP side: AUTH (PLAIN, LOGIN; a provider's token
 * is the password, any user name), STARTTLS, the size limit (552 over it), the per-address rate
 * limit of `webhook.rateLimitPerMinute` (450 beyond), 550 at RCPT for a recipient no provider
 * has, and the 250 only once the events are durable. The plugin owns the message:
 * {@link ProviderInstance.verifyMail} at RCPT, {@link ProviderInstance.handleMail} after DATA.
 *
 * @example
 * ```ts
 * manifest: { id: 'mailbox', kind: 'provider', ingest: 'webhook', mail: { maxBytes: 512 * 1024 }, … }
 * ```
 */
export interface MailSpec {
  /**
   * Largest message accepted for this plugin's providers, in bytes (552 beyond). The listener's own
   * limit (`SERVICE_SMTP_MAX_BYTES`, default 1 MiB, advertised in EHLO) applies above it.
   */
  maxBytes?: number;
}

/** One recipient of a message on the SMTP listener, as {@link ProviderInstance.verifyMail} sees it at RCPT. */
export interface MailEnvelope {
  /** The envelope sender (`MAIL FROM`), lower-cased; empty for the null sender `<>`. */
  from: string;
  /** The recipient as given in `RCPT TO`: its local part is this provider's token. Never log it. */
  recipient: string;
  /** The client's address. */
  ip: string;
  /** True when the session authenticated (AUTH PLAIN or LOGIN) with this provider's token as the password. */
  authenticated: boolean;
  /** The user name given with AUTH, when the session authenticated. */
  authUser?: string;
  /** True when the session is encrypted (STARTTLS). */
  secure: boolean;
}

/** A message received for one provider, as {@link ProviderInstance.handleMail} sees it after DATA. */
export interface InboundMail extends MailEnvelope {
  /** The message as received (RFC 5322 header and body, dot-stuffing removed), at most the size limit. */
  raw: Buffer;
}

export interface ProviderInstance extends Lifecycle {
  poll?(ctx: PollContext): Promise<void>;
  /**
   * Authenticates an inbound webhook before the core parses its body, and before it reads the body
   * at all when the headers are proof enough (a bearer token, a shared token header): a sender
   * without the credential then costs neither. The core calls it first with the headers only
   * (`rawBody` absent). On `needs_body` it reads the body (up to `webhook.maxBodyBytes`) and calls
   * it again with `rawBody`; that answer must be `ok`. Throw `WebhookRejectedError` (401 for a
   * missing or wrong credential) to refuse; the core answers with its status and records it in the
   * payload log. Only then are the JSON body's depth checked, the body parsed, and
   * {@link handleWebhook} called, which need not authenticate again. Compare secrets with `safeEqual`.
   *
   * Without this method the core parses the body first and `handleWebhook` authenticates, as before.
   *
   * @example A bearer token (decided from the headers) or an HMAC of the raw body (needs the body)
   * ```ts
   * verifyWebhook(req) {
   *   if (mode === 'bearer') {
   *     if (!safeEqual(req.headers.authorization ?? '', `Bearer ${secret}`))
   *       throw new WebhookRejectedError(401, 'bearer token does not match');
   *     return 'ok';
   *   }
   *   const signature = req.headers['x-signature-256'] ?? '';
   *   if (!/^sha256=[0-9a-f]{64}$/.test(signature))
   *     throw new WebhookRejectedError(401, 'missing or malformed X-Signature-256');
   *   if (!req.rawBody) return 'needs_body';
   *   if (!safeEqual(signature, `sha256=${hmacSha256Hex(secret, req.rawBody)}`))
   *     throw new WebhookRejectedError(401, 'signature does not match the body');
   *   return 'ok';
   * },
   * ```
   */
  verifyWebhook?(req: WebhookAuthRequest): WebhookVerdict | Promise<WebhookVerdict>;
  /**
   * Turns an inbound webhook into events. With {@link verifyWebhook} it runs only for requests
   * that passed it; without, it must authenticate the request itself. Throw `WebhookRejectedError`
   * for a request it refuses (409 replayed, 422 unexpected payload…).
   */
  handleWebhook?(req: InboundWebhook): Promise<WebhookResult>;
  /**
   * Decides at `RCPT TO` whether this provider takes mail from this envelope (see {@link MailSpec}),
   * so that a refused message is never accepted and then dropped: return to accept, throw
   * `WebhookRejectedError` to refuse. Its `status` picks the SMTP reply: 401 authentication
   * required (530), any other 4xx a permanent refusal (550), 5xx a temporary one (451, the sender
   * retries). Its message is the reply's text: say what is wrong, never echo a secret.
   *
   * @example AUTH required by the configuration, and a sender allow list
   * ```ts
   * verifyMail(env) {
   *   if (ctx.config.require_auth && !env.authenticated)
   *     throw new WebhookRejectedError(401, 'this mailbox needs SMTP authentication with its token as the password');
   *   if (!allowed(env.from)) throw new WebhookRejectedError(403, 'this sender is not allowed for this mailbox');
   * },
   * ```
   */
  verifyMail?(envelope: MailEnvelope): void | Promise<void>;
  /**
   * Turns a message received on the SMTP listener into events (one call per provider among the
   * recipients; parse the raw message here, loading heavy parsers lazily). The core records the
   * events, with the message's excerpt in the provider's webhook log, and only then answers 250. A
   * `replayKey` (e.g. from the Message-ID) makes a message the sender retries after a temporary
   * failure count once: return no events when `ctx.store` already holds it, and the core answers
   * 250 without recording anything. `status` and `body` are not used. Throw `WebhookRejectedError`
   * to refuse (4xx: 554, the sender gives up; 5xx: 451, it retries); anything else thrown is a 451.
   */
  handleMail?(mail: InboundMail): Promise<WebhookResult>;
}

/**
 * A rendered notification ready for one target. Read it, do not change what it holds: the deliveries of one event to
 * targets alike share one render, so `payload` and `provider` may be the very objects another target's message holds.
 */
export interface OutboundMessage {
  /** Stable across retries of the same delivery: use it as the idempotency / transaction key. */
  deliveryId: string;
  eventId: string;
  eventType: string;
  severity: Severity;
  locale: Locale;
  /** Format of `title` and `body` (one of the target's declared formats). */
  format: MessageFormat;
  title: string;
  body: string;
  /** The same message as plain text, for multipart channels (email). */
  plainTitle: string;
  plainBody: string;
  url?: string;
  /**
   * The event behind the message, for targets that forward it as data (MQTT, a generic HTTP call):
   * its provider, when it happened at the source (ISO 8601) and its payload, with fields named like
   * secrets redacted. Absent on a quiet-hours digest, which stands for several events.
   */
  provider?: { kind: string; name: string };
  occurredAt?: string;
  payload?: Record<string, unknown>;
  /** True for test messages sent from the API. */
  test?: boolean;
  /**
   * Set when the core split a long body (`overflow: 'split'`): this is part `index` (from 1) of
   * `count`. Part 1 keeps the delivery's `deliveryId`; part k > 1 carries `<deliveryId>-<k>`, so an
   * idempotency key still tells the parts apart.
   */
  part?: { index: number; count: number };
}

export interface SendOptions {
  signal: AbortSignal;
  attempt: number;
}
/**
 * Where a sent message lives on the channel, in the target's own terms (e.g. Telegram
 * `{ chat_id, message_id }`, Matrix `{ room_id, event_id }`, email `{ message_id }`). Opaque to the
 * core: stored with the delivery (JSON, at most 4 KiB) and handed back to {@link TargetInstance.update}
 * and {@link TargetInstance.reply}. Never put a secret in it.
 */
export type MessageRef = Record<string, string | number | boolean | null>;
export interface SendResult {
  remoteId?: string;
  detail?: string;
  /**
   * Where the message went, for editing it later (see {@link TargetInstance.update}). For a message
   * the target sent in several parts: the first part.
   */
  messageRef?: MessageRef;
}

/** What {@link TargetInstance.update} and {@link TargetInstance.reply} receive. */
export interface FollowUpRequest {
  /** The message sent earlier for the same correlation key (its `messageRef` as `send` returned it). */
  previous: { messageRef: MessageRef; deliveryId: string; eventType: string };
  /** The new rendering, for the newer event. */
  message: OutboundMessage;
}

/**
 * Returned by {@link TargetInstance.update} or {@link TargetInstance.reply} when this message cannot
 * be followed up that way (the channel cannot edit, the new text does not fit one message…): the
 * core then tries the next way (reply, then a new message). Throwing `PermanentSendError` does the
 * same and is recorded in the log; any other error is retried like a failed send.
 */
export const NOT_SUPPORTED = false as const;

export interface TargetInstance extends Lifecycle {
  /**
   * Deliver one message. Throw RateLimitedError (429), RetryableSendError (5xx, network),
   * PermanentSendError (4xx) or AuthFailedError (rejected credential); anything else counts as retryable.
   */
  send(message: OutboundMessage, options: SendOptions): Promise<SendResult | void>;
  /**
   * Optional: edits the earlier message `previous` so it shows `message` instead (Telegram
   * `editMessageText`, a Matrix `m.replace` edit). Called for an event whose type declares a
   * {@link CorrelationSpec} when this target sent a message for the same key before, and again on
   * every retry of that delivery (so make it idempotent: editing to the same text is a success).
   * Return `NOT_SUPPORTED` (false) or throw `PermanentSendError` to have the core reply instead
   * (see {@link reply}), else send a new message. Return a `messageRef` when the message moved.
   */
  update?(request: FollowUpRequest, options: SendOptions): Promise<SendResult | void | typeof NOT_SUPPORTED>;
  /**
   * Optional: posts `message` as a reply threaded to the earlier message `previous` (a Telegram
   * reply, an email with `In-Reply-To`), for channels that cannot edit or when the edit failed.
   * Return `NOT_SUPPORTED` (false) or throw `PermanentSendError` to have the core send a new message.
   */
  reply?(request: FollowUpRequest, options: SendOptions): Promise<SendResult | void | typeof NOT_SUPPORTED>;
}

export interface TargetContext<C> extends BaseContext<C> {
  /** The messaging bot this target sends through, when its config names one (`bot_id`). */
  readonly bot?: MessagingBotRef;
  /**
   * Web Push to the owner's browsers (RFC 8030, 8291, 8292), kept by the core: the browsers the
   * owner subscribed in the web client ("Notify this browser" on the account page) and the
   * service's VAPID key pair. Absent in a core that does not keep them. See {@link WebPushAccess}.
   */
  readonly webPush?: WebPushAccess;
}

/** One browser's push subscription as the Push API gave it (`PushSubscription.toJSON()`). */
export interface WebPushSubscription {
  /** The core's id of the subscription (what `remove` and `markSuccess` take). */
  id: string;
  /** The push service's URL for this browser (https; a capability: never log it in full). */
  endpoint: string;
  /** `p256dh`: the browser's P-256 public key; `auth`: its 16-byte auth secret (a credential). Both base64url. */
  keys: { p256dh: string; auth: string };
}

/**
 * What a Web Push target needs from the core. The core generates the VAPID key pair once, keeps
 * it (the private key sealed at rest) and keeps each user's browser subscriptions (the auth
 * secrets sealed); both join the log masker when read.
 *
 * @example
 * ```ts
 * const subs = await ctx.webPush!.subscriptions();
 * const vapid = await ctx.webPush!.vapid();
 * // … send to each; a push service answering 404 or 410 means the browser unsubscribed:
 * await ctx.webPush!.remove(sub.id);
 * ```
 */
export interface WebPushAccess {
  /**
   * The service's VAPID key pair (base64url: the 65-byte uncompressed public key, the 32-byte
   * private key) and the `sub` claim to sign with (`https:` or `mailto:`). Created on first use.
   */
  vapid(): Promise<{ publicKey: string; privateKey: string; subject: string }>;
  /** The owner's subscribed browsers, oldest first. */
  subscriptions(): Promise<WebPushSubscription[]>;
  /** Forgets one subscription of the owner (the push service said it is gone). */
  remove(id: string): Promise<void>;
  /** Records that a push to this subscription was accepted (shown to the user as "last delivered"). */
  markSuccess(id: string): Promise<void>;
  /** The web client's address of an event, for a notification's click. */
  eventUrl(eventId: string): string;
}

/** A messaging bot record as a target plugin sees it. */
export interface MessagingBotRef {
  id: string;
  token: string;
  botId?: string;
  username?: string /** A self-hosted bot API server, when the bot record names one. */;
  apiRoot?: string;
}

/**
 * A chat seen on an inbound bot update, in the service's own terms. The core stores it (one row per
 * bot and `chatId`, updated in place when seen again) and lists it under `GET /api/bots/{id}/chats`.
 *
 * @example A forum topic
 * ```ts
 * const chat: SeenChat = { chatId: '-100500', type: 'supergroup', title: 'Family', threadId: 3, isForum: true };
 * ```
 */
export interface SeenChat {
  /** The service's id of the chat, as text; what a target's config names to send there. */
  chatId: string;
  /** The service's kind of chat (e.g. `private`, `group`, `channel`), shown to the user as is. */
  type: string;
  title?: string;
  username?: string;
  /** The topic or thread the update came from, when replies should go there too. */
  threadId?: number;
  isForum?: boolean;
}

/**
 * What the core needs from one inbound update: the chat it came from and, for a command, the
 * command's name. A `/start` command registers the chat and is answered with a greeting.
 *
 * @example
 * ```ts
 * const update: ParsedUpdate = {
 *   updateId: 10,
 *   chat: { chatId: '42', type: 'private' },
 *   text: '/start',
 *   command: 'start',
 * };
 * ```
 */
export interface ParsedUpdate {
  /**
   * The service's id of the update, for logs; the polling position comes from
   * {@link MessagingBotDriver.nextOffset}.
   */
  updateId?: number | string;
  /** The chat the update came from; without one the update is acknowledged and otherwise ignored. */
  chat?: SeenChat;
  text?: string;
  /** The bot command without its slash and @mention, e.g. `start`. */
  command?: string;
}

/**
 * What a bot driver runs with: the core's outbound HTTP client (SSRF policy applied), a logger and the bot's own API
 * server.
 */
export interface BotDriverContext {
  http: OutboundHttp;
  log: PluginLogger;
  /** The bot record's own API server (`api_root`, e.g. a self-hosted one), overriding the driver's default. */
  apiRoot?: string;
}

/**
 * A request that arrived on a bot's inbound route, `POST /api/bots/{webhook_path_id}/webhook`, as
 * {@link MessagingBotDriver.verifyWebhook} sees it: before the body is parsed, so that a request
 * without the secret never costs a parse. {@link MessagingBotDriver.parseUpdate} then gets the body,
 * parsed and nested at most {@link MAX_JSON_DEPTH} deep.
 */
export interface BotWebhookRequest {
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  /** The exact bytes received; verify signatures over this. */
  rawBody: Buffer;
  /** @deprecated Always undefined: the core verifies before it parses. Verify from the headers and `rawBody`. */
  body?: unknown;
}

/**
 * Driver of a messaging-bot service: how a target plugin lets the core run bots of its kind. The
 * core owns what is the same for every service: bot records and their API, the inbound route
 * `POST /api/bots/{webhook_path_id}/webhook`, one long-polling loop per polling bot (on the
 * scheduler leader, with backoff and a status on the record), chat registration, the `/start`
 * greeting in the owner's language, shutdown. The driver owns the service's protocol: who a token
 * is, setting and removing webhooks, how an inbound request proves it came from the service, the
 * long-polling call and what its offset means, reading updates, replying.
 *
 * Every method that calls the service throws the contract's errors: `AuthFailedError` when the
 * token is rejected (the core stops using the bot until its token changes), anything else for a
 * failure worth retrying. Never put the token into an error message.
 *
 * @example A driver for a service with a `/updates?after=` endpoint and a signed webhook
 * ```ts
 * import {
 *   AuthFailedError, RetryableSendError, hmacSha256Hex, safeEqual, type BotDriverContext, type MessagingBotDriver,
 * } from '@herald/plugin-api';
 * const root = (ctx: BotDriverContext) => ctx.apiRoot ?? 'https://api.chat.example';
 * async function api(ctx: BotDriverContext, token: string, path: string, init: RequestInit & { signal: AbortSignal }) {
 *   const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
 *   const res = await ctx.http.fetch(`${root(ctx)}${path}`, { ...init, headers });
 *   if (res.status === 401) throw new AuthFailedError('the bot token was rejected');
 *   if (!res.ok) throw new RetryableSendError(`chat.example answered ${res.status}`, res.status);
 *   return res.json();
 * }
 * export const driver: MessagingBotDriver = {
 *   async getMe(ctx, token, signal) {
 *     const me = await api(ctx, token, '/me', { signal });
 *     return { botId: me.id, username: me.handle };
 *   },
 *   async setWebhook(ctx, token, url, secret, signal) {
 *     await api(ctx, token, '/webhook', { method: 'PUT', body: JSON.stringify({ url, secret }), signal });
 *   },
 *   async deleteWebhook(ctx, token, signal) { await api(ctx, token, '/webhook', { method: 'DELETE', signal }); },
 *   verifyWebhook: (req, secret) =>
 *     safeEqual(req.headers['x-chat-signature'] ?? '', hmacSha256Hex(secret, req.rawBody)),
 *   async getUpdates(ctx, token, offset, timeoutSeconds, signal) {
 *     return (await api(ctx, token, `/updates?after=${offset}&wait=${timeoutSeconds}`, { signal })).updates;
 *   },
 *   nextOffset: (update, offset) => Math.max(offset, (update as { seq: number }).seq),
 *   parseUpdate: (u: any) =>
 *     u?.room
 *       ? { updateId: u.seq, chat: { chatId: u.room.id, type: u.room.kind }, text: u.text,
 *           command: /^\/(\w+)/.exec(u.text ?? '')?.[1] }
 *       : null,
 *   async reply(ctx, token, chat, text, signal) {
 *     const body = JSON.stringify({ text });
 *     await api(ctx, token, `/rooms/${chat.chatId}/messages`, { method: 'POST', body, signal });
 *   },
 * };
 * ```
 */
export interface MessagingBotDriver {
  /**
   * Who the token belongs to: the service's id of the bot (unique among a service's bots; the core
   * refuses a second record of the same bot) and its username. Throws `AuthFailedError` for a
   * rejected token.
   */
  getMe(ctx: BotDriverContext, token: string, signal: AbortSignal): Promise<{ botId: string; username?: string }>;
  /**
   * Webhook mode: tells the service to deliver the bot's updates to `url` (the bot's inbound route
   * on the public URL) and to prove each delivery with `secret`, in whatever way
   * {@link verifyWebhook} checks. The secret is this bot's own (the core derives it from
   * `SERVICE_MESSAGING_WEBHOOK_SECRET` and the bot's webhook path; 43 characters of
   * `A-Za-z0-9_-`); the core may call this again with a new one, e.g. after the key changed.
   */
  setWebhook(ctx: BotDriverContext, token: string, url: string, secret: string, signal: AbortSignal): Promise<void>;
  /**
   * Stops webhook delivery. The core calls it before a polling loop starts (a service may refuse
   * polling while a webhook is set), when a bot is switched to polling and when a webhook bot is
   * deleted; failures are ignored. A service without webhooks resolves at once.
   */
  deleteWebhook(ctx: BotDriverContext, token: string, signal: AbortSignal): Promise<void>;
  /**
   * Whether a request on the inbound route came from the service: `secret` is the one the core
   * gives {@link setWebhook} for the path the request arrived on. Compare in constant time
   * (`safeEqual`). A request it refuses is answered 401 before the path is looked at, so path ids
   * cannot be probed.
   *
   * @example A secret echoed in a header
   * ```ts
   * verifyWebhook: (req, secret) => safeEqual(req.headers['x-chat-secret'] ?? '', secret),
   * ```
   */
  verifyWebhook(req: BotWebhookRequest, secret: string): boolean;
  /**
   * Long polling: the updates after position `offset`, holding the request open up to
   * `timeoutSeconds` while there are none; `signal` aborts at shutdown. `offset` is 0 for a new
   * bot, then whatever {@link nextOffset} returned for the last processed update (the core stores
   * it on the bot record, so polling resumes there after a restart). Resolve with the raw updates
   * in order; each goes through {@link parseUpdate}.
   */
  getUpdates(
    ctx: BotDriverContext,
    token: string,
    offset: number,
    timeoutSeconds: number,
    signal: AbortSignal,
  ): Promise<unknown[]>;
  /**
   * The polling position once the raw `update` has been processed (`offset` is the current one):
   * the value the next {@link getUpdates} call receives. The core stores it only after the update
   * is recorded, so a crash replays it (recording is idempotent). Return `offset` to keep it.
   *
   * @example Services whose offset is "the last id seen plus one"
   * ```ts
   * nextOffset: (update, offset) => {
   *   const id = (update as { id?: unknown }).id;
   *   return typeof id === 'number' && id >= offset ? id + 1 : offset;
   * },
   * ```
   */
  nextOffset(update: unknown, offset: number): number;
  /** Reads one raw update (polled, or an inbound request's JSON body); null when it is not one. */
  parseUpdate(update: unknown): ParsedUpdate | null;
  /** Posts plain `text` into `chat` (and its thread); the core uses it for the `/start` greeting. */
  reply(ctx: BotDriverContext, token: string, chat: SeenChat, text: string, signal: AbortSignal): Promise<void>;
}

/**
 * A problem a plugin finds in an instance configuration beyond what its schema expresses
 * (a rule across fields, a value that must be acknowledged). The API answers 422 with it.
 */
export interface ConfigProblem {
  /** JSON pointer of the field inside the config, e.g. `/acknowledge_unauthenticated`; `/` for the whole config. */
  path: string;
  /** What is wrong with the field, continuing its name: `must be true when auth_mode is none`. */
  message: string;
  /**
   * Stable machine-readable code the API answers with (e.g. `unauthenticated_not_acknowledged`); default
   * `validation_failed`.
   */
  code?: string;
  /** A whole sentence for the answer's `detail`: what to do about it. Default: the path and message. */
  detail?: string;
  /**
   * The values of the message (`{ limit: 16 }`), so that a client can phrase `code` in its own
   * language. With a JSON Schema keyword as `code` (`required`, `minLength`, `pattern`…) and its
   * usual params, the web client shows its own words for it under the field.
   */
  params?: Record<string, string | number | boolean>;
}

/**
 * Refines config validation beyond the schema. Called with the config after the schema check
 * passed and defaults were applied, whenever a config is saved through the API or restored from a
 * backup (not when an instance starts: `create()` still guards itself). Returns the problems found,
 * an empty list when the config is acceptable. Must be synchronous and free of I/O.
 */
export type ConfigValidator<C> = (config: C) => ConfigProblem[];

export interface ProviderDefinition<C extends TSchema = TSchema, T extends TSchema = TSchema> {
  manifest: PluginManifest<C, T> & { kind: 'provider' };
  create(ctx: ProviderContext<Static<C>, Static<T>>): ProviderInstance | Promise<ProviderInstance>;
  /** Optional checks of an instance config beyond its schema; see {@link ConfigValidator}. */
  validateConfig?: ConfigValidator<Static<C>>;
}

export interface TargetDefinition<C extends TSchema = TSchema> {
  manifest: PluginManifest<C> & { kind: 'target' };
  create(ctx: TargetContext<Static<C>>): TargetInstance | Promise<TargetInstance>;
  /** Optional checks of an instance config beyond its schema; see {@link ConfigValidator}. */
  validateConfig?: ConfigValidator<Static<C>>;
  /**
   * Optional messaging-bot driver: makes `manifest.id` a bot kind (`POST /api/bots` with
   * `kind: manifest.id`), so users can add bots of this service and the core runs them in polling
   * or webhook mode through the driver. See {@link MessagingBotDriver}.
   *
   * @example
   * ```ts
   * export default defineTarget({ manifest, create: (ctx) => createTarget(ctx), botDriver: createBotDriver() });
   * ```
   */
  botDriver?: MessagingBotDriver;
}

export type PluginDefinition = ProviderDefinition<any, any> | TargetDefinition<any>;

/** Declares a provider plugin; the identity function that gives the definition its types. */
export const defineProvider = <C extends TSchema, T extends TSchema = TSchema>(
  p: ProviderDefinition<C, T>,
): ProviderDefinition<C, T> => p;

/** Declares a target plugin. */
export const defineTarget = <C extends TSchema>(p: TargetDefinition<C>): TargetDefinition<C> => p;

/**
 * Paths (dot-separated) of every field marked Secret in a schema. Arrays use `[]`.
 * @internal Used by the core (redaction, masking, backups); plugins do not need it.
 */
export function secretPaths(schema: unknown, prefix = ''): string[] {
  const out: string[] = [];
  const walk = (s: any, path: string): void => {
    if (!s || typeof s !== 'object') return;
    if (s[SECRET_KEY] === true) {
      out.push(path);
      return;
    }
    if (s.properties) for (const [k, v] of Object.entries(s.properties)) walk(v, path ? `${path}.${k}` : k);
    if (s.items) walk(s.items, `${path}[]`);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
      if (Array.isArray(s[key])) for (const sub of s[key]) walk(sub, path);
  };
  walk(schema, prefix);
  return [...new Set(out)];
}
