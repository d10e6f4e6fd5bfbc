import type { FastifyRequest } from 'fastify';
import type { App } from '../../http/server.ts';
import type { Core } from '../../core.ts';
import { providerRowFrom } from '../../plugins/host.ts';
import { errorCode } from '../../plugin-api/index.ts';
import { problem } from '../../http/problem.ts';
import { newId } from '../../http/ids.ts';
import { redactObject, redactText } from '../../logging/redact.ts';
import { InvalidEventError } from '../service.ts';
import type { Relay } from '../pipeline/relay.ts';
import { WindowLimiter } from '../../http/rate-limit.ts';
import { DbInstanceStore } from '../../plugins/store.ts';
import type { Queryable } from '../../db/database.ts';

const MAX_BODY = 5 * 1024 * 1024;
const DEFAULT_PLUGIN_BODY = 1024 * 1024;
const EXCERPT = 2048;

/**
 * The redacted start of a request body for the payload log. The text is cut before it is
 * redacted: the redaction patterns backtrack over long runs of word characters, and a whole
 * body of megabytes (unauthenticated, or over the size limit) would stall the event loop.
 */
function excerpt(raw: Buffer, body: unknown): string {
  if (body !== undefined) return redactText(JSON.stringify(redactObject(body)).slice(0, EXCERPT * 2)).slice(0, EXCERPT);
  return redactText(raw.subarray(0, EXCERPT * 2).toString('utf8')).slice(0, EXCERPT);
}

/**
 * `POST /api/hooks/{webhook_token}`: the one inbound door for webhook-kind providers. The plugin
 * verifies and translates; the core rate-limits, records every request in webhook_payload_log, and
 * answers 202 only once the events are durable.
 */
export async function webhookRoutes(app: App, core: Core, relay: Relay): Promise<void> {
  const limiters = new Map<string, WindowLimiter>();
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY }, (_req, body, done) => done(null, body));
    scope.post('/api/hooks/:token', { bodyLimit: MAX_BODY, schema: { tags: ['relay'], summary: 'Receive an inbound webhook for a provider', description: 'The token in the path names the provider; its plugin checks the request (signature, bearer or shared token) and maps it to events. 202 once every event is durable, 401 for a failed check, 409 for a replayed delivery, 413 for a body over the limit, 429 beyond the requests-a-minute limit the plugin declares for one source address, counted over all providers of that plugin.', security: [], params: { type: 'object', properties: { token: { type: 'string', maxLength: 200 } }, required: ['token'] } } }, async (req, reply) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const { token } = req.params as { token: string };
      const row = await core.db.get('SELECT * FROM providers WHERE webhook_token = ?', [token]);
      const send = (status: number, code: string, detail: string, headers: Record<string, string> = {}) =>
        reply.code(status).headers(headers).type('application/problem+json').send(problem(status, code, detail));
      if (!row) return send(404, 'not_found', 'No webhook is registered at this address.');
      const provider = providerRowFrom(row);
      const plugin = core.plugins.provider(provider.kind);
      if (!plugin || plugin.def.manifest.ingest !== 'webhook') return send(404, 'not_found', 'No webhook is registered at this address.');
      let body: unknown;
      const ctype = String(req.headers['content-type'] ?? '');
      if (raw.length && (ctype.includes('json') || ctype === '')) { try { body = JSON.parse(raw.toString('utf8')); } catch { body = undefined; } }
      // Worked out once, before any transaction: the redaction is CPU work that must not run while the connection is held.
      const payloadExcerpt = raw.length ? excerpt(raw, body) : null;
      const log = async (status: number, error: string | null, eventIds: string[] | null, q: Queryable = core.db) => {
        await q.run(`INSERT INTO webhook_payload_log (id, user_id, provider_id, received_at, status_code, error_message, payload_excerpt, source_ip, event_ids)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, [newId(), provider.user_id, provider.id, core.clock.now().toISOString(), status, error, payloadExcerpt, req.ip, eventIds]);
      };
      // The plugin's limit holds per source address over all of its providers together: one sender
      // cannot multiply it by spreading requests over several webhook URLs.
      const limit = plugin.def.manifest.webhook?.rateLimitPerMinute;
      if (limit) {
        let l = limiters.get(provider.kind);
        if (!l) { l = new WindowLimiter(limit); limiters.set(provider.kind, l); }
        const wait = l.take(req.ip);
        if (wait) {
          await log(429, `rate limit of ${limit} requests a minute per address exceeded`, null);
          return send(429, 'rate_limited', `At most ${limit} requests a minute are accepted from one address; retry in ${wait} s.`, { 'retry-after': String(wait) });
        }
      }
      if (!provider.enabled) { await log(409, 'provider is disabled', null); return send(409, 'provider_disabled', 'This provider is disabled; enable it to accept webhooks.'); }
      const maxBody = plugin.def.manifest.webhook?.maxBodyBytes ?? DEFAULT_PLUGIN_BODY;
      if (raw.length > maxBody) { await log(413, `body of ${raw.length} bytes exceeds ${maxBody}`, null); return send(413, 'body_too_large', `The body is larger than ${maxBody} bytes.`); }
      // Any replica takes any webhook: when this one does not run the instance yet, or runs an older
      // version of the record (created or edited through another replica), it starts it now.
      const running = await core.plugins.ensureProvider(provider);
      if (!running?.instance?.handleWebhook) {
        await log(503, `provider instance is ${running?.state ?? 'not running'}`, null);
        return send(503, 'provider_unavailable', `This provider is not running (${running?.state ?? 'stopped'}); check its configuration.`, { 'retry-after': '30' });
      }
      const headers: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
      let result;
      try {
        result = await running.instance.handleWebhook({ method: req.method, headers, rawBody: raw, body, query: (req.query ?? {}) as Record<string, string>, ip: req.ip });
      } catch (err) {
        const status = errorCode(err) === 'WEBHOOK_REJECTED' ? (err as { status: number }).status : 500;
        const msg = (err as Error).message;
        await log(status, msg, null);
        if (status >= 500) (req as FastifyRequest).log.error({ err, provider_id: provider.id }, 'webhook handler failed');
        return send(status, status === 401 ? 'unauthorized' : status === 409 ? 'replayed' : status === 400 ? 'bad_request' : status === 422 ? 'invalid_payload' : 'error', status >= 500 ? 'The webhook could not be processed; the error was logged.' : msg);
      }
      const ids: string[] = [];
      // Only once the events are durable is the delivery remembered as processed: the replay key and
      // the payload log row are written in the last event's own transaction (one commit for all).
      const remember = (q: Queryable) => result.replayKey
        ? new DbInstanceStore(q, provider.id, () => core.clock.now()).set(result.replayKey.key, 1, { ttlSeconds: result.replayKey.ttlSeconds })
        : Promise.resolve();
      let recorded = false;
      try {
        for (let i = 0; i < result.events.length; i++) {
          const last = i === result.events.length - 1;
          const r = await relay.ingestWith(provider, result.events[i]!, last ? async (q, eventId) => {
            await remember(q);
            await log(202, null, [...ids, eventId], q);
            recorded = true;
          } : undefined);
          ids.push(...r.eventIds);
        }
      } catch (err) {
        const msg = err instanceof InvalidEventError ? err.message : 'the event could not be recorded';
        await log(err instanceof InvalidEventError ? 422 : 500, msg, ids);
        if (!(err instanceof InvalidEventError)) throw err;
        return send(422, 'invalid_event', `The webhook produced an invalid event: ${msg}`);
      }
      if (!result.events.length) {
        const status = result.status ?? 200;
        await Promise.all([remember(core.db), log(status, null, [])]);
        return reply.code(status).send(result.body ?? { ok: true });
      }
      if (!ids.length) {
        await Promise.all([remember(core.db), log(200, 'nothing recorded: the events carried no change', [])]);
        return reply.code(200).send({ event_ids: [], detail: 'Accepted; the events carried no change, so nothing was recorded.' });
      }
      if (!recorded) await Promise.all([remember(core.db), log(202, null, ids)]);
      return reply.code(202).send({ event_ids: ids });
    });
  });
}
