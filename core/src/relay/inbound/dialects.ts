/**
 * Dialect routes: the routes provider plugins declare (`manifest.webhook.routes`) to receive
 * requests in another service's own wire format at that service's own paths (Gotify's
 * `POST /message`, ntfy's `PUT /<topic>`, the Apprise API's `POST /notify/<key>`), so that apps made
 * for it post to Herald unchanged. A route only says where the token is and how answers look;
 * everything else is the webhook route's (webhooks.ts): rate limit per source address,
 * disabled-record refusal, body limits before parsing, JSON depth, verifyWebhook, the payload
 * log, and an answer sent only once the events are durable.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../../core.ts';
import { randomToken } from '../../http/ids.ts';
import { HttpError, TITLES } from '../../http/problem.ts';
import { ok } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import { type DialectRequest, type DialectRoute, errorCode, type Locale } from '../../plugin-api/index.ts';
import {
  type Admitted,
  HOOK_ANSWERS,
  headersOf,
  type InboundSteps,
  MAX_BODY,
  type ProviderPlugin,
  sendAnswer,
  stringsOf,
} from './webhooks.ts';

/** The problem codes of Fastify's own refusals a dialect route can meet (its body limit, a bad Content-Length). */
const FASTIFY_CODES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
};

/** The route's path parameters with their names, for the OpenAPI document. */
function paramNames(path: string): string[] {
  return path
    .split('/')
    .filter((s) => s.startsWith(':'))
    .map((s) => (s.includes('(') ? s.slice(1, s.indexOf('(')) : s.slice(1)));
}

/**
 * Every enabled webhook provider plugin's dialect routes; throws (stopping the boot) for a route that cannot be
 * registered safely.
 */
export function declaredRoutes(core: Core): { plugin: ProviderPlugin; spec: DialectRoute }[] {
  const out: { plugin: ProviderPlugin; spec: DialectRoute }[] = [];
  const taken = new Map<string, string>();
  for (const p of core.plugins.plugins.values()) {
    if (p.kind !== 'provider' || p.def.manifest.ingest !== 'webhook') continue;
    for (const spec of (p.def.manifest as { webhook?: { routes?: DialectRoute[] } }).webhook?.routes ?? []) {
      const where = `Plugin "${p.id}" declares the dialect route ${spec.method} ${spec.path}`;
      if (spec.method !== 'POST' && spec.method !== 'PUT')
        throw new Error(`${where}: only POST and PUT routes can be declared.`);
      if (!spec.path.startsWith('/') || spec.path.startsWith('/api/hooks/'))
        throw new Error(`${where}: the path must be absolute and outside /api/hooks/.`);
      const first = spec.path.split('/')[1] ?? '';
      // A parameter at the root must say what it matches, so the route cannot take the web client's paths.
      if (first.startsWith(':') && !first.includes('('))
        throw new Error(
          `${where}: a parameter in the first segment needs a pattern, e.g. /:topic(^[-_A-Za-z0-9]{16,64}$).`,
        );
      if (typeof spec.token !== 'function') throw new Error(`${where} without a token finder.`);
      const key = `${spec.method} ${spec.path}`;
      const other = taken.get(key);
      if (other)
        throw new Error(`Plugins "${other}" and "${p.id}" both declare the dialect route ${key}; enable only one.`);
      taken.set(key, p.id);
      out.push({ plugin: p as ProviderPlugin, spec });
    }
  }
  return out;
}

/** A plugin's refusal thrown by its token finder as the answer; anything else is a bug, answered 500. */
function rejected(err: unknown): HttpError {
  if (errorCode(err) !== 'WEBHOOK_REJECTED') throw err;
  const status = (err as { status: number }).status;
  return new HttpError(
    status,
    status === 401 ? 'unauthorized' : status === 404 ? 'not_found' : 'bad_request',
    (err as Error).message,
  );
}

/**
 * The answers of a dialect route: the webhook route's, with its success in the dialect's words
 * (200, or 202 when the plugin words none) and, where the dialect has its own error shape
 * (`errorBody`), every refusal in that shape rather than as problem details.
 */
function dialectAnswers(spec: DialectRoute): Record<string, unknown> {
  const answers: Record<string, unknown> = {
    ...HOOK_ANSWERS,
    ...ok('Accepted, answered as the service this route imitates answers.'),
  };
  if (!spec.errorBody) return answers;
  for (const status of [400, 401, 403, 404, 409, 413, 422, 429, 503]) {
    const what = (answers[status] as { description?: string } | undefined)?.description ?? `${TITLES[status]}.`;
    answers[status] = { description: `${what} In the imitated service's own error shape, not problem details.` };
  }
  return answers;
}

/** Registers each declared dialect route, in a scope of its own whose refusals come out in the dialect's shape. */
export async function dialectRoutes(app: App, core: Core, steps: InboundSteps): Promise<void> {
  const routes = declaredRoutes(core);
  if (!routes.length) return;
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY }, (_req, body, done) => done(null, body));
    for (const { plugin, spec } of routes)
      await scope.register(async (one: App) => {
        register(one, plugin, spec, steps);
      });
  });
}

function register(scope: App, plugin: ProviderPlugin, spec: DialectRoute, steps: InboundSteps): void {
  const door = { kind: plugin.id, unknownStatus: spec.unknownToken ?? 404 };
  const admitted = new WeakMap<FastifyRequest, Admitted>();
  const view = (req: FastifyRequest, rawBody?: Buffer): DialectRequest => ({
    method: req.method,
    params: stringsOf(req.params),
    headers: headersOf(req),
    query: stringsOf(req.query),
    ...(rawBody ? { rawBody } : {}),
  });
  const tokenOf = (req: FastifyRequest, rawBody?: Buffer): string | undefined | 'needs_body' => {
    try {
      return spec.token(view(req, rawBody));
    } catch (err) {
      throw rejected(err);
    }
  };
  const route = (req: FastifyRequest) => ({ spec, params: stringsOf(req.params) });
  const noToken = () => new HttpError(401, 'unauthorized', 'The request carries no token.');

  // Refusals in the dialect's shape, where it has one; anything else goes on to the service's own handler.
  scope.setErrorHandler((err: FastifyError, req, reply: FastifyReply) => {
    let refusal: { status: number; code: string; detail: string; headers?: Record<string, string> };
    if (err instanceof HttpError)
      refusal = { status: err.status, code: err.code, detail: err.message, headers: err.headers };
    else if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500)
      refusal = { status: err.statusCode, code: FASTIFY_CODES[err.code] ?? 'bad_request', detail: err.message };
    else throw err;
    if (!spec.errorBody) throw err;
    if (refusal.headers) reply.headers(refusal.headers);
    return sendAnswer(
      reply,
      spec.errorBody(
        { status: refusal.status, code: refusal.code, detail: refusal.detail },
        { headers: headersOf(req) },
      ),
      refusal.status,
    );
  });

  const names = paramNames(spec.path);
  scope.route({
    method: spec.method,
    url: spec.path,
    bodyLimit: MAX_BODY,
    config: { credentialParams: spec.credentialParams ?? [] },
    schema: {
      tags: ['relay'],
      summary: spec.summary,
      security: [],
      description:
        `${spec.description ? `${spec.description} ` : ''}Handled like POST /api/hooks/{token} for a ` +
        `provider of kind "${plugin.id}": the same rate limit, body limits, payload log, and an answer only ` +
        'once the events are durable.',
      ...(names.length
        ? {
            params: {
              type: 'object',
              properties: Object.fromEntries(names.map((n) => [n, { type: 'string', maxLength: 200 }])),
              required: names,
            },
          }
        : {}),
      consumes: ['*/*'],
      response: dialectAnswers(spec),
    },
    // Runs before the body is read: a request refused here is never read into memory or parsed.
    preParsing: async (req) => {
      const token = tokenOf(req);
      if (token === 'needs_body') {
        // The provider is known only once the body is read: the plugin's limits apply before it is.
        const over = steps.limit(plugin, req);
        if (over) throw over;
        const tooLarge = steps.declaredTooLarge(req, steps.maxBodyOf(plugin));
        if (tooLarge) throw tooLarge;
        return;
      }
      if (!token) {
        const over = steps.limit(plugin, req);
        throw over ?? noToken();
      }
      admitted.set(req, await steps.admit(req, await steps.find(token, door), token, { route: route(req) }));
    },
    handler: async (req, reply) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      let a = admitted.get(req);
      if (!a) {
        const maxBody = steps.maxBodyOf(plugin);
        if (raw.length > maxBody)
          throw new HttpError(413, 'body_too_large', `The body is larger than ${maxBody} bytes.`, {
            params: { limit: maxBody },
          });
        const token = tokenOf(req, raw);
        if (!token || token === 'needs_body') throw noToken();
        a = await steps.admit(req, await steps.find(token, door), token, { limited: true, route: route(req) });
      }
      return steps.receive(req, reply, a, raw);
    },
  });
}

/** The service's public URL (`SERVICE_PUBLIC_URL`, else the address it listens on), without a trailing slash. */
export function publicUrlOf(core: Core): string {
  return core.plugins.webhookUrl({ webhook_token: '' }).slice(0, -'/api/hooks/'.length);
}

/**
 * A new provider's webhook token: `webhook.tokenBytes` random bytes (default 32), base64url, never beginning with
 * "-". The token is also a mailbox (`<token>@host`) and a command-line argument: Postfix refuses addresses that begin
 * with "-" by default (`allow_min_user`), and tools such as swaks read such a value as an option.
 */
export function newWebhookToken(plugin?: { def: { manifest: { webhook?: { tokenBytes?: number } } } }): string {
  const bytes = plugin?.def.manifest.webhook?.tokenBytes;
  const size = typeof bytes === 'number' && Number.isInteger(bytes) ? Math.min(48, Math.max(12, bytes)) : 32;
  for (;;) {
    const token = randomToken(size);
    if (token[0] !== '-') return token;
  }
}

/** One value to paste into the sending app, labelled in the caller's language. */
export interface ConnectionValue {
  key: string;
  label: string;
  hint?: string;
  value: string;
  secret: boolean;
}

/**
 * Where devices send mail while the SMTP listener is on (`SERVICE_SMTP_PORT`): the address it
 * listens on, or the public URL's host when it listens on every interface.
 */
export function smtpAddress(core: Core): { host: string; port: number } | undefined {
  const smtp = core.config.smtp;
  if (!smtp) return undefined;
  const everywhere = ['0.0.0.0', '::', '[::]', ''].includes(smtp.host);
  return { host: everywhere ? new URL(publicUrlOf(core)).hostname : smtp.host, port: smtp.port };
}

/**
 * What the providers API shows a webhook provider's user: the URL to paste (the plugin's
 * `webhook.connection` URL, else `/api/hooks/<token>`), when the plugin lists them the values an
 * app asks for one by one, labelled from its locale files (English, then the key), and the
 * plugin's ready-to-run example command.
 */
export function webhookConnection(
  core: Core,
  plugin: ProviderPlugin,
  token: string,
  locale: Locale,
): { url: string; fields: ConnectionValue[] | null; example: string | null } {
  const webhookUrl = core.plugins.webhookUrl({ webhook_token: token });
  const connect = plugin.def.manifest.webhook?.connection;
  if (!connect) return { url: webhookUrl, fields: null, example: null };
  const smtp = plugin.def.manifest.mail ? smtpAddress(core) : undefined;
  const c = connect(publicUrlOf(core), token, { webhookUrl, ...(smtp ? { smtp } : {}) });
  const words = plugin.def.manifest.locales;
  const fields = (c.fields ?? []).map((f) => {
    const text = words?.[locale]?.connection?.[f.key] ?? {};
    const en = words?.en?.connection?.[f.key] ?? {};
    const hint = text.hint ?? en.hint;
    return {
      key: f.key,
      label: text.label ?? en.label ?? f.key,
      ...(hint ? { hint } : {}),
      value: f.value,
      secret: f.secret === true,
    };
  });
  return { url: c.url ?? webhookUrl, fields, example: c.example ?? null };
}
