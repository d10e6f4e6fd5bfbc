import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { Core } from '../../core.ts';
import type { Queryable } from '../../db/database.ts';
import { HttpError } from '../../http/problem.ts';
import { WindowLimiter } from '../../http/rate-limit.ts';
import { accepted, errors, ok } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import { liveOf } from '../../live/hints.ts';
import { MASK } from '../../logging/redact.ts';
import {
  type DialectAnswer,
  type DialectRoute,
  errorCode,
  jsonTooDeep,
  MAX_JSON_DEPTH,
  type ProviderDefinition,
  type ProviderInstance,
  type WebhookAuthRequest,
  type WebhookResult,
  type WebhookVerdict,
} from '../../plugin-api/index.ts';
import { type ProviderRow, providerRowFrom } from '../../plugins/host.ts';
import type { LoadedPlugin } from '../../plugins/loader.ts';
import { DbInstanceStore } from '../../plugins/store.ts';
import { configCacheOf } from '../config-cache.ts';
import type { ProviderDbRow } from '../definitions/provider.ts';
import { ReplayedError } from '../pipeline/ingest.ts';
import type { Relay } from '../pipeline/relay.ts';
import { InvalidEventError } from '../service.ts';
import { dialectRoutes } from './dialects.ts';
import { payloadExcerpt, recordPayload } from './payload-log.ts';

/** Largest body any inbound webhook route reads; each plugin's own limit is checked against it. */
export const MAX_BODY = 5 * 1024 * 1024;
const DEFAULT_PLUGIN_BODY = 1024 * 1024;

export type ProviderPlugin = LoadedPlugin & { def: ProviderDefinition };

/** What the route knows about a request before its body is read. */
export interface Admitted {
  provider: ProviderRow;
  instance: ProviderInstance & Required<Pick<ProviderInstance, 'handleWebhook'>>;
  maxBody: number;
  /** Lower-case header names, one string per header. */
  headers: Record<string, string | undefined>;
  /** The plugin's first answer; `legacy` when it has no verifyWebhook (handleWebhook authenticates). */
  verdict: WebhookVerdict | 'legacy';
  /** The token the request named: masked in the excerpts the payload log keeps. */
  token: string;
  /** The dialect route the request came in on, with its path parameters; absent on `/api/hooks/{token}`. */
  route?: { spec: DialectRoute; params: Record<string, string> };
}

/**
 * Where a token is looked up: any webhook kind (`/api/hooks`), or one plugin's (a dialect route), and what an unknown
 * one is answered.
 */
export interface Door {
  kind?: string;
  unknownStatus?: 401 | 404;
}

/** The problem code the API answers for a status a plugin refused a request with. */
function refusalCode(status: number): string {
  return status === 401
    ? 'unauthorized'
    : status === 409
      ? 'replayed'
      : status === 400
        ? 'bad_request'
        : status === 422
          ? 'invalid_payload'
          : status === 404
            ? 'not_found'
            : 'error';
}

/** Bodies the core parses as JSON: those that say so, and those that say nothing. */
function isJson(req: FastifyRequest): boolean {
  const ctype = String(req.headers['content-type'] ?? '');
  return ctype.includes('json') || ctype === '';
}

/** Lower-case header names, one string per header. */
export function headersOf(req: FastifyRequest): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return headers;
}

/**
 * Path parameters or a query string as the plugin contract gives them: each value a string, a
 * repeated query key's values joined with `, ` as `headersOf` joins a repeated header's.
 */
export function stringsOf(values: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (values && typeof values === 'object')
    for (const [k, v] of Object.entries(values)) out[k] = Array.isArray(v) ? v.join(', ') : String(v);
  return out;
}

/** Sends a dialect's answer: an object as JSON, a string as text, unless it names its type. */
export function sendAnswer(reply: FastifyReply, answer: DialectAnswer, status: number): FastifyReply {
  if (answer.headers) reply.headers(answer.headers);
  const type =
    answer.contentType ??
    (typeof answer.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8');
  return reply
    .code(answer.status ?? status)
    .type(type)
    .send(
      typeof answer.body === 'string' || type.startsWith('application/json')
        ? answer.body
        : JSON.stringify(answer.body),
    );
}

/**
 * The steps every inbound webhook request goes through, shared by `POST /api/hooks/{token}` and the
 * plugins' dialect routes (dialects.ts): rate limit, token lookup, disabled-record refusal, body
 * limits, verifyWebhook, JSON depth, handleWebhook, durable events, payload log, answer.
 */
export function inboundSteps(core: Core, relay: Relay) {
  const limiters = new Map<string, WindowLimiter>();
  const record = (
    provider: ProviderRow,
    req: FastifyRequest,
    status: number,
    error: string | null,
    excerpt: string | null = null,
    eventIds: string[] | null = null,
    q: Queryable = core.db,
  ) =>
    recordPayload(
      q,
      core.clock.now(),
      { userId: provider.user_id, providerId: provider.id },
      { status, error, excerpt, ip: req.ip, eventIds },
    ).then(() =>
      // After the write: a client that refetches the log on this hint finds the entry.
      liveOf(core.services).publish(provider.user_id, { kind: 'webhook_log', provider_id: provider.id }),
    );
  /** A redacted excerpt of the body with the request's own token masked (ntfy's JSON names its topic in the body). */
  const excerptOf = (token: string, raw: Buffer, body?: unknown): string | null => {
    const e = payloadExcerpt(raw, body);
    return e && token && e.includes(token) ? e.split(token).join(MASK) : e;
  };

  /** A plugin's refusal (WebhookRejectedError) as the API's answer; anything else it throws is a 500, logged. */
  const refusal = async (
    err: unknown,
    provider: ProviderRow,
    req: FastifyRequest,
    excerpt: string | null,
  ): Promise<HttpError> => {
    const status = errorCode(err) === 'WEBHOOK_REJECTED' ? (err as { status: number }).status : 500;
    const msg = (err as Error).message;
    await record(provider, req, status, msg, excerpt);
    if (status < 500) return new HttpError(status, refusalCode(status), msg);
    req.log.error({ err, provider_id: provider.id }, 'webhook handler failed');
    return new HttpError(status, 'error', 'The webhook could not be processed; the error was logged.');
  };

  /** Asks the plugin's verifyWebhook; resolves with its verdict or throws the answer to send. */
  const verify = async (a: Admitted, req: FastifyRequest, rawBody?: Buffer): Promise<WebhookVerdict> => {
    const auth: WebhookAuthRequest = {
      method: req.method,
      headers: a.headers,
      query: stringsOf(req.query),
      ip: req.ip,
      ...(rawBody ? { rawBody } : {}),
    };
    try {
      return await a.instance.verifyWebhook!(auth);
    } catch (err) {
      throw await refusal(err, a.provider, req, rawBody ? excerptOf(a.token, rawBody) : null);
    }
  };

  /**
   * Counts the request against the plugin's per-address limit (over all of its providers together:
   * one sender cannot multiply it by spreading requests over several tokens); the answer to send
   * when it is over, else undefined.
   */
  const limit = (plugin: ProviderPlugin, req: FastifyRequest): HttpError | undefined => {
    const perMinute = plugin.def.manifest.webhook?.rateLimitPerMinute;
    if (!perMinute) return undefined;
    let l = limiters.get(plugin.id);
    if (!l) {
      l = new WindowLimiter(perMinute);
      limiters.set(plugin.id, l);
    }
    const wait = l.take(req.ip, core.clock.now().getTime());
    return wait
      ? new HttpError(
          429,
          'rate_limited',
          `At most ${perMinute} requests a minute are accepted from one address; retry in ${wait} s.`,
          { headers: { 'retry-after': String(wait) } },
        )
      : undefined;
  };

  /** The largest body the plugin accepts. */
  const maxBodyOf = (plugin: ProviderPlugin): number =>
    Math.min(MAX_BODY, plugin.def.manifest.webhook?.maxBodyBytes ?? DEFAULT_PLUGIN_BODY);

  /** A body declared (Content-Length) over the limit, refused before it is read. */
  const declaredTooLarge = (req: FastifyRequest, maxBody: number): HttpError | undefined => {
    const declared = Number(req.headers['content-length'] ?? 0);
    return declared > maxBody
      ? new HttpError(413, 'body_too_large', `The body is larger than ${maxBody} bytes.`, {
          params: { limit: maxBody },
        })
      : undefined;
  };

  /**
   * The provider a token names, of a webhook kind (and of `door.kind` when given); throws 404 (or `door.unknownStatus`)
   * for any other.
   */
  const find = async (token: string, door: Door = {}): Promise<{ provider: ProviderRow; plugin: ProviderPlugin }> => {
    // Kept in memory while the configuration's version holds (config-cache.ts); an unknown token is always read.
    const cache = configCacheOf(core.db);
    await cache.sync(core.db);
    const row = await cache.get(
      `token\u0000${token}`,
      () => core.db.get<ProviderDbRow>('SELECT * FROM providers WHERE webhook_token = ?', [token]),
      (r) => r !== undefined,
    );
    const plugin = row ? core.plugins.provider(String(row.kind)) : undefined;
    if (
      !row ||
      !plugin ||
      plugin.def.manifest.ingest !== 'webhook' ||
      (door.kind !== undefined && plugin.id !== door.kind)
    ) {
      throw door.unknownStatus === 401
        ? new HttpError(401, 'unauthorized', 'The token names no provider of this kind.')
        : new HttpError(404, 'not_found', 'No webhook is registered at this address.');
    }
    return { provider: providerRowFrom(row), plugin: plugin as ProviderPlugin };
  };

  /**
   * Everything decided about a known provider before the body is read (`limited`: the rate limit
   * was already counted, before the provider was known). Throws the answer for a request refused here.
   */
  const admit = async (
    req: FastifyRequest,
    found: { provider: ProviderRow; plugin: ProviderPlugin },
    token: string,
    o: { limited?: boolean; route?: Admitted['route'] } = {},
  ): Promise<Admitted> => {
    const { provider, plugin } = found;
    const refuseWith = async (err: HttpError, error: string) => {
      await record(provider, req, err.status, error);
      return err;
    };
    if (!o.limited) {
      const over = limit(plugin, req);
      if (over)
        throw await refuseWith(
          over,
          `rate limit of ${plugin.def.manifest.webhook?.rateLimitPerMinute} requests a minute per address exceeded`,
        );
    }
    if (!provider.enabled)
      throw await refuseWith(
        new HttpError(409, 'provider_disabled', 'This provider is disabled; enable it to accept webhooks.'),
        'provider is disabled',
      );
    const maxBody = maxBodyOf(plugin);
    const tooLarge = declaredTooLarge(req, maxBody);
    if (tooLarge) throw await refuseWith(tooLarge, `body of ${req.headers['content-length']} bytes exceeds ${maxBody}`);
    // Any replica takes any webhook: when this one does not run the instance yet, or runs an older
    // version of the record (created or edited through another replica), it starts it now.
    const running = await core.plugins.ensureProvider(provider);
    const instance = running?.instance;
    if (!instance?.handleWebhook) {
      throw await refuseWith(
        new HttpError(
          503,
          'provider_unavailable',
          `This provider is not running (${running?.state ?? 'stopped'}); check its configuration.`,
          { headers: { 'retry-after': '30' } },
        ),
        `provider instance is ${running?.state ?? 'not running'}`,
      );
    }
    const a: Admitted = {
      provider,
      instance: instance as Admitted['instance'],
      maxBody,
      headers: headersOf(req),
      verdict: 'legacy',
      token,
      route: o.route,
    };
    if (instance.verifyWebhook) {
      a.verdict = await verify(a, req);
      if (a.verdict !== 'ok' && a.verdict !== 'needs_body')
        throw await refuseWith(
          new HttpError(401, 'unauthorized', 'The request could not be verified.'),
          `verifyWebhook answered ${String(a.verdict)}`,
        );
    }
    return a;
  };

  /**
   * The body's part: measured size, a signature over the body, the JSON depth, the plugin's
   * handleWebhook, the events made durable, the answer (a dialect's own, or 202 with the ids).
   */
  const receive = async (req: FastifyRequest, reply: FastifyReply, a: Admitted, raw: Buffer) => {
    const { provider } = a;
    // A body sent without a declared length is measured once read.
    if (raw.length > a.maxBody) {
      await record(provider, req, 413, `body of ${raw.length} bytes exceeds ${a.maxBody}`, excerptOf(a.token, raw));
      throw new HttpError(413, 'body_too_large', `The body is larger than ${a.maxBody} bytes.`, {
        params: { limit: a.maxBody },
      });
    }
    if (a.verdict === 'needs_body' && (await verify(a, req, raw)) !== 'ok') {
      await record(provider, req, 401, 'verifyWebhook did not accept the body', excerptOf(a.token, raw));
      throw new HttpError(401, 'unauthorized', 'The request could not be verified.');
    }
    let body: unknown;
    if (raw.length && isJson(req)) {
      if (jsonTooDeep(raw)) {
        await record(
          provider,
          req,
          400,
          `JSON body nested deeper than ${MAX_JSON_DEPTH} levels`,
          excerptOf(a.token, raw),
        );
        throw new HttpError(400, 'json_too_deep', `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`, {
          params: { limit: MAX_JSON_DEPTH },
        });
      }
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = undefined;
      }
    }
    // Worked out once, before any transaction: the redaction is CPU work that must not run while the connection is
    // held.
    const excerpt = excerptOf(a.token, raw, body);
    let result: WebhookResult;
    try {
      result = await a.instance.handleWebhook({
        method: req.method,
        headers: a.headers,
        rawBody: raw,
        body,
        query: stringsOf(req.query),
        ip: req.ip,
        ...(a.route ? { route: { path: a.route.spec.path, params: a.route.params } } : {}),
      });
    } catch (err) {
      throw await refusal(err, provider, req, excerpt);
    }
    const ids: string[] = [];
    // Only once the events are durable is the delivery remembered as processed: the replay key and
    // the request's payload-log entry are columns of the last event's own row (one commit, one row).
    const remember = (q: Queryable) =>
      result.replayKey
        ? new DbInstanceStore(q, provider.id, () => core.clock.now()).set(result.replayKey.key, 1, {
            ttlSeconds: result.replayKey.ttlSeconds,
          })
        : Promise.resolve();
    // The core refuses a replay itself (contract 1.4.0). One event's write checks the key in its own transaction;
    // no event, or several (written one by one), are checked here, before anything is written.
    const held = async () =>
      result.replayKey !== undefined &&
      (await new DbInstanceStore(core.db, provider.id, () => core.clock.now()).get(result.replayKey.key)) !== undefined;
    const single = result.events.length === 1;
    let recorded = false;
    try {
      if (!single && (await held())) throw new ReplayedError();
      for (let i = 0; i < result.events.length; i++) {
        const last = i === result.events.length - 1;
        const r = await relay.ingestWith(
          provider,
          result.events[i]!,
          last
            ? {
                webhook: { ip: req.ip, excerpt, earlierIds: [...ids], replayKey: result.replayKey },
                configSynced: true,
              }
            : { configSynced: true },
        );
        if (last && r.eventIds.length) recorded = true;
        ids.push(...r.eventIds);
      }
      // A single event that carried no change was not written, so its key was not checked either.
      if (single && !ids.length && (await held())) throw new ReplayedError();
    } catch (err) {
      if (err instanceof ReplayedError) {
        // The key is held: a delivery of the same id was processed before (or committed first, concurrently).
        await record(provider, req, 409, err.message, excerpt, ids);
        throw new HttpError(409, 'replayed', err.message);
      }
      const msg = err instanceof InvalidEventError ? err.message : 'the event could not be recorded';
      await record(provider, req, err instanceof InvalidEventError ? 422 : 500, msg, excerpt, ids);
      if (!(err instanceof InvalidEventError)) throw err;
      throw new HttpError(422, 'invalid_event', `The webhook produced an invalid event: ${msg}`);
    }
    // Every answer below is sent only now that the events (if any) are durable. On a dialect route
    // the plugin words it; a failure to word it is a 500 (the events stay recorded).
    const dialect = a.route && result.respond ? result.respond.bind(result) : undefined;
    if (!result.events.length) {
      const status = result.status ?? 200;
      await Promise.all([remember(core.db), record(provider, req, status, null, excerpt, [])]);
      return dialect
        ? sendAnswer(reply, dialect({ eventIds: [] }), 200)
        : reply.code(status).send(result.body ?? { ok: true });
    }
    if (!ids.length) {
      await Promise.all([
        remember(core.db),
        record(provider, req, 200, 'nothing recorded: the events carried no change', excerpt, []),
      ]);
      return dialect
        ? sendAnswer(reply, dialect({ eventIds: [] }), 200)
        : reply
            .code(200)
            .send({ event_ids: [], detail: 'Accepted; the events carried no change, so nothing was recorded.' });
    }
    if (!recorded) await Promise.all([remember(core.db), record(provider, req, 202, null, excerpt, ids)]);
    return dialect ? sendAnswer(reply, dialect({ eventIds: ids }), 200) : reply.code(202).send({ event_ids: ids });
  };

  return { record, limit, maxBodyOf, declaredTooLarge, find, admit, receive, excerptOf };
}

export type InboundSteps = ReturnType<typeof inboundSteps>;

/**
 * `POST /api/hooks/{webhook_token}`: the one inbound door for webhook-kind providers (beside the
 * dialect routes plugins declare, which go through the same steps). The plugin verifies and
 * translates; the core rate-limits, records every request in webhook_payload_log, and answers 202
 * only once the events are durable.
 *
 * Bounded before parsed: what needs no body (the provider, the rate limit, its state, a declared
 * size over the limit, and a credential the headers carry) is settled before the body is read; a
 * signature over the body is checked before it is parsed; and a JSON body is parsed only once its
 * nesting is known to be within MAX_JSON_DEPTH. A sender without the credential costs no parse.
 */
/** What an inbound webhook is answered, beside the errors every route with a body gives (400, 413, 500). */
export const HOOK_ANSWERS = {
  ...ok(
    'The request was taken but recorded no event (the plugin found nothing to record, or the events ' +
      "carried no change); or the plugin's own answer.",
    // `{ event_ids: [], detail }`, or whatever the service the plugin speaks for expects (any JSON, or text).
    Type.Unknown(),
  ),
  ...accepted(
    'Every event is durable: their ids (`event_ids`).',
    Type.Object({ event_ids: Type.Array(Type.String({ format: 'uuid' })) }),
  ),
  ...errors(
    [401, "The plugin's check of the request (signature, bearer or shared token) failed."],
    [403, 'The plugin refused the sender.'],
    [404, 'No webhook is registered at this address.'],
    [409, 'The provider is disabled (`provider_disabled`), or the delivery was received before (`replayed`).'],
    [422, 'The plugin could not read the request, or it produced an invalid event (`invalid_event`).'],
    [429, 'Over the requests a minute the plugin accepts from one address.'],
    [503, 'The provider is not running (`provider_unavailable`); check its configuration.'],
  ),
};

export async function webhookRoutes(app: App, core: Core, relay: Relay): Promise<void> {
  const steps = inboundSteps(core, relay);
  const admitted = new WeakMap<FastifyRequest, Admitted>();

  await app.register(async (scope: App) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY }, (_req, body, done) => done(null, body));
    scope.post(
      '/api/hooks/:token',
      {
        bodyLimit: MAX_BODY,
        config: { credentialParams: ['token'] },
        schema: {
          tags: ['relay'],
          summary: 'Receive an inbound webhook for a provider',
          description:
            'The token in the path names the provider; its plugin checks the request (signature, bearer or ' +
            'shared token) and maps it to events. 202 once every event is durable, 400 for a JSON body ' +
            `nested deeper than ${MAX_JSON_DEPTH} levels, 401 for a failed check, 409 for a replayed ` +
            'delivery, 413 for a body over the limit, 429 beyond the requests-a-minute limit the plugin ' +
            'declares for one source address, counted over all providers of that plugin.',
          security: [],
          params: Type.Object({ token: Type.String({ maxLength: 200 }) }),
          // Any content type: the plugin reads the body.
          consumes: ['*/*'],
          response: HOOK_ANSWERS,
        },
        // Runs before the body is read: a request refused here is never read into memory or parsed.
        preParsing: async (req) => {
          const { token } = req.params;
          admitted.set(req, await steps.admit(req, await steps.find(token), token));
        },
      },
      async (req, reply) =>
        steps.receive(req, reply, admitted.get(req)!, Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)),
    );
  });
  await dialectRoutes(app, core, steps);
}
