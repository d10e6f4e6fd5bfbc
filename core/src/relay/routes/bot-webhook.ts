/**
 * `POST /api/bots/{webhook_path_id}/webhook`: updates pushed by a bot service in webhook mode. The
 * route is the same for every bot kind; the kind's driver checks that the request came from its
 * service, with the secret of the path (each bot has its own, see ../bots/webhook-secret.ts), and
 * reads the update. `GET /api/bots/{id}/webhook-log`: what that route received.
 */
import Type from 'typebox';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { HttpError, notFound, unauthorized } from '../../http/problem.ts';
import { errors, IdParams, ListQuery, ok } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import {
  type BotWebhookRequest,
  jsonTooDeep,
  MAX_JSON_DEPTH,
  type MessagingBotDriver,
} from '../../plugin-api/index.ts';
import { type BotRow, botDriver, botDrivers } from '../bots/driver.ts';
import { botRuntime } from '../bots/runtime.ts';
import { greet, recordUpdate } from '../bots/updates.ts';
import { botWebhookSecret, SHARED_SECRET } from '../bots/webhook-secret.ts';
import { WebhookLog } from '../definitions/webhook-log.ts';
import { payloadExcerpt, payloadLogPage, recordPayload } from '../inbound/payload-log.ts';
import { headersOf } from '../inbound/webhooks.ts';
import { owned } from './common.ts';

/** A driver's verdict on a request; a driver that throws refuses it. */
function verified(driver: MessagingBotDriver, req: BotWebhookRequest, secret: string): boolean {
  try {
    return driver.verifyWebhook(req, secret) === true;
  } catch {
    return false;
  }
}

export async function botWebhookRoutes(app: App, core: Core): Promise<void> {
  await app.register(async (scope: App) => {
    // The body stays bytes until the driver has verified the request: a request without the secret
    // is never parsed, and a JSON body is parsed only once its nesting is known to be bounded.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    scope.post(
      '/api/bots/:id/webhook',
      {
        config: { credentialParams: ['id'] },
        schema: {
          tags: ['relay'],
          security: [],
          params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }),
          consumes: ['*/*'],
          response: {
            ...ok('The update was received (`{ ok: true }`).', Type.Object({ ok: Type.Literal(true) })),
            ...errors([401, 'The bot webhook secret is missing or wrong.']),
          },
        },
      },
      async (req) => {
        const key = core.config.messagingWebhookSecret;
        // Without the key no webhook can have been set, so nothing is accepted.
        if (!key) throw unauthorized('The bot webhook secret is missing or wrong.');
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const inbound: BotWebhookRequest = { headers: headersOf(req), rawBody: raw };
        const pathId = req.params.id;
        // The secret belongs to the path, whether or not a bot has it: only this service can make it.
        const secret = botWebhookSecret(key, pathId);
        const bot = await core.db.get<BotRow>('SELECT * FROM bots WHERE webhook_path_id = ?', [pathId]);
        const driver = bot ? botDriver(core, bot.kind) : undefined;
        // The request is authenticated before the path is reported on, so that path ids cannot be
        // probed: for an unknown path, 404 only when some bot kind's driver accepts the path's secret.
        if (!bot || !driver) {
          if (!botDrivers(core).some((d) => verified(d, inbound, secret)))
            throw unauthorized('The bot webhook secret is missing or wrong.');
          throw notFound('Bot');
        }
        // A webhook registered before bots had their own secrets proves deliveries with the shared
        // value until the runtime registers it again with the bot's own (see BotRuntime).
        const proven =
          verified(driver, inbound, secret) || (bot.webhook_key_id === SHARED_SECRET && verified(driver, inbound, key));
        let body: unknown;
        const record = (status: number, error: string | null) =>
          recordPayload(
            core.db,
            core.clock.now(),
            { userId: bot.user_id, botId: bot.id },
            { status, error, excerpt: payloadExcerpt(raw, body), ip: req.ip },
          );
        if (!proven) {
          await record(401, 'the bot webhook secret is missing or wrong');
          throw unauthorized('The bot webhook secret is missing or wrong.');
        }
        if (raw.length) {
          if (jsonTooDeep(raw)) {
            await record(400, `JSON body nested deeper than ${MAX_JSON_DEPTH} levels`);
            throw new HttpError(400, 'json_too_deep', `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`, {
              params: { limit: MAX_JSON_DEPTH },
            });
          }
          try {
            body = JSON.parse(raw.toString('utf8'));
          } catch {
            await record(400, 'the body is not JSON');
            throw new HttpError(400, 'malformed_json', 'The request body is not valid JSON.');
          }
        }
        const update = driver.parseUpdate(body);
        if (update) {
          const chat = await recordUpdate(core, bot, update);
          // Answer at once; the greeting goes out in the background (shutdown waits for it).
          if (chat)
            botRuntime(core).track(
              greet(
                core,
                { ...bot, token: core.atRest.openLenient(bot.token) },
                chat,
                driver,
                botRuntime(core).messages,
              ),
            );
        }
        await record(200, null);
        return { ok: true as const };
      },
    );
  });

  app.get(
    '/api/bots/:id/webhook-log',
    {
      schema: {
        tags: ['relay'],
        summary: 'The webhook requests this bot received, newest first',
        params: IdParams,
        querystring: ListQuery,
        response: { ...ok('The webhook requests this bot received, newest first.', WebhookLog) },
      },
      preHandler: requireUser(core),
    },
    async (req) => {
      const user = caller(req);
      const bot = await owned<BotRow>(core, 'bots', req.params.id, user.id, 'Bot');
      return payloadLogPage(core, { userId: user.id, botId: bot.id }, req.query);
    },
  );
}
