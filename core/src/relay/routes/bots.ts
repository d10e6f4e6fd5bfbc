/** Messaging bots: `GET, POST /api/bots`, `GET, PATCH, DELETE /api/bots/{id}`, `GET /api/bots/{id}/chats`. */

import type { Static } from 'typebox';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { Database as Db } from '../../db/database.ts';
import { insertRow, updateRow } from '../../db/rows.ts';
import { newId, randomToken } from '../../http/ids.ts';
import { conflict, unprocessable } from '../../http/problem.ts';
import { created, errors, IdParams, ListQuery, noContent, ok } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import type { MessagingBotDriver } from '../../plugin-api/index.ts';
import { type Connection, connectBot } from '../bots/connect.ts';
import {
  BOT_CALL_TIMEOUT_MS,
  type BotRow,
  botDriver,
  botKinds,
  deadline,
  driverContext,
  rememberToken,
} from '../bots/driver.ts';
import { botRuntime } from '../bots/runtime.ts';
import {
  type BotChatDbRow,
  BotChatList,
  BotCreateBody,
  BotList,
  BotPatchBody,
  BotView,
  botChatFieldsOf,
  botFieldsOf,
} from '../definitions/bot.ts';
import { nowIso, owned, pageSql } from './common.ts';
import { MASKED } from './secrets.ts';
import { maskUrlLogin, refuseUrlLogin } from './url-credentials.ts';

/** The bot as the API shows it: never its token or its webhook path. */
export function botView(row: BotRow): Static<typeof BotView> {
  return {
    id: row.id,
    kind: row.kind,
    ...botFieldsOf(row),
    token: MASKED,
    api_root: maskUrlLogin(row.api_root ?? null),
    status: row.status,
    status_detail: row.status_detail ?? null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function needDriver(core: Core, kind: string): MessagingBotDriver {
  const d = botDriver(core, kind);
  if (!d)
    throw unprocessable(
      `Bots of kind "${kind}" are not available; the enabled bot kinds are: ${botKinds(core).join(', ') || 'none'}.`,
      [{ path: 'body/kind', message: 'is not an enabled bot kind' }],
      'unknown_kind',
    );
  return d;
}

/**
 * The kind of a new bot: the one named, else the only bot kind this service runs. With none or
 * several enabled the caller must say, and is told which kinds there are in their language.
 */
function kindOf(core: Core, named: string | undefined, locale: string): string {
  if (named) return named;
  const kinds = botKinds(core);
  if (kinds.length === 1) return kinds[0];
  const messages = botRuntime(core).messages;
  const detail = kinds.length
    ? messages.text('kind_required', locale).replace('{{kinds}}', kinds.join(', '))
    : messages.text('no_bot_kinds', locale);
  throw unprocessable(
    detail,
    [
      {
        path: 'body/kind',
        message: kinds.length ? `is required: the bot kinds are ${kinds.join(', ')}` : 'no bot kind is enabled',
      },
    ],
    'kind_required',
  );
}

function needSecretFor(core: Core, mode: string): void {
  if (mode === 'webhook' && !core.config.messagingWebhookSecret) {
    throw unprocessable(
      'Webhook mode needs SERVICE_MESSAGING_WEBHOOK_SECRET to be set on the server; use polling mode or ' +
        'ask the operator to set it.',
      [{ path: 'body/mode', message: 'webhook mode is not configured on this server' }],
      'webhook_secret_missing',
    );
  }
}

function refuseRejected(c: Connection): void {
  if (c.status === 'auth_failed')
    throw unprocessable(
      'The bot token was rejected by the bot service; check it and try again.',
      [{ path: 'body/token', message: 'was rejected' }],
      'bot_token_rejected',
    );
}

async function botIdTaken(core: Core, botId: string | null, exceptId?: string): Promise<boolean> {
  if (!botId) return false;
  return Boolean(await core.db.get('SELECT 1 AS x FROM bots WHERE bot_id = ? AND id <> ?', [botId, exceptId ?? '']));
}

/** Targets of the owner that send through this bot (their config names it). */
async function targetsUsing(
  core: Core,
  bot: { id: string; user_id: string; kind: string },
): Promise<{ id: string; name: string }[]> {
  const rows = await core.db.all<{ id: string; name: string; config: unknown }>(
    'SELECT id, name, config FROM targets WHERE user_id = ? AND kind = ?',
    [bot.user_id, bot.kind],
  );
  return rows.filter((t) => Db.json<{ bot_id?: unknown }>(t.config, {}).bot_id === bot.id);
}

const isUniqueViolation = (err: unknown) => /unique|duplicate key/i.test((err as Error)?.message ?? '');

/**
 * Registers a bot for `user`: asks the bot service who the token is, refuses a rejected token and a
 * bot already registered, stores the record (token sealed) and starts it. Resolves with its id.
 */
export async function createBot(
  core: Core,
  user: { id: string; locale: string },
  b: Static<typeof BotCreateBody>,
): Promise<string> {
  const kind = kindOf(core, b.kind, user.locale);
  const driver = needDriver(core, kind);
  refuseUrlLogin(b.api_root, 'api_root');
  needSecretFor(core, b.mode);
  rememberToken(core, b.token);
  const pathId = randomToken();
  const c = await connectBot(core, driver, {
    kind,
    token: b.token,
    mode: b.mode,
    webhook_path_id: pathId,
    api_root: b.api_root ?? null,
  });
  refuseRejected(c);
  if (await botIdTaken(core, c.botId)) throw conflict('This bot is already registered with Herald.', 'bot_exists');
  const id = newId();
  const now = nowIso(core);
  try {
    await insertRow(core.db, 'bots', {
      id,
      user_id: user.id,
      kind,
      name: b.name,
      token: core.atRest.seal(b.token),
      bot_id: c.botId,
      username: c.username,
      mode: b.mode,
      webhook_path_id: pathId,
      api_root: b.api_root ?? null,
      webhook_key_id: c.webhookKeyId ?? null,
      status: c.status,
      status_detail: c.detail,
      created_at: now,
      updated_at: now,
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('This bot is already registered with Herald.', 'bot_exists');
    throw err;
  }
  await botRuntime(core).changed(id);
  return id;
}

export async function botRoutes(app: App, core: Core): Promise<void> {
  const auth = requireUser(core);
  const get = (id: string, userId: string) => owned<BotRow>(core, 'bots', id, userId, 'Bot');

  app.get(
    '/api/bots',
    {
      schema: {
        tags: ['relay'],
        querystring: ListQuery,
        response: { ...ok('Your messaging bots (`bots`), newest first; tokens are never shown.', BotList) },
      },
      preHandler: auth,
    },
    async (req) => {
      const params: unknown[] = [caller(req).id];
      const rows = await core.db.all<BotRow>(
        `SELECT * FROM bots WHERE user_id = ?${pageSql('', req.query, params)}`,
        params as never[],
      );
      return { bots: rows.map(botView) };
    },
  );

  app.post(
    '/api/bots',
    {
      schema: {
        tags: ['relay'],
        body: BotCreateBody,
        response: {
          ...created('The new bot.', BotView),
          ...errors([409, 'This bot is already registered (`bot_exists`).']),
        },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const id = await createBot(core, user, req.body);
      reply.code(201);
      return botView(await get(id, user.id));
    },
  );

  app.get(
    '/api/bots/:id',
    { schema: { tags: ['relay'], params: IdParams, response: { ...ok('The bot.', BotView) } }, preHandler: auth },
    async (req) => botView(await get(req.params.id, caller(req).id)),
  );

  app.patch(
    '/api/bots/:id',
    {
      schema: {
        tags: ['relay'],
        params: IdParams,
        body: BotPatchBody,
        response: {
          ...ok('The changed bot.', BotView),
          ...errors([409, "The new token's bot is already registered (`bot_exists`)."]),
        },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const row = await get(req.params.id, user.id);
      const b = req.body;
      refuseUrlLogin(b.api_root, 'api_root');
      // A stored token no key opens counts as none: the owner sends it again.
      const current = core.atRest.openLenient(row.token);
      const token = b.token === undefined || b.token === MASKED ? current : b.token;
      const mode = b.mode ?? row.mode;
      const apiRoot = b.api_root === undefined ? (row.api_root ?? null) : b.api_root;
      const reconnect =
        token !== current ||
        mode !== row.mode ||
        apiRoot !== (row.api_root ?? null) ||
        (row.status !== 'ok' && row.status !== 'running');
      let c: Connection = {
        botId: row.bot_id,
        username: row.username,
        status: row.status as Connection['status'],
        detail: row.status_detail,
      };
      if (reconnect) {
        const driver = needDriver(core, row.kind);
        needSecretFor(core, mode);
        // The polling loop must let go before the webhook is set (or the token changes); a refused edit restarts it as
        // it was.
        await botRuntime(core).removed(row.id);
        try {
          c = await connectBot(core, driver, {
            kind: row.kind,
            token,
            mode,
            webhook_path_id: row.webhook_path_id,
            api_root: apiRoot,
          });
          // A stored token that stopped working is recorded; only a new token that is rejected is refused.
          if (token !== current) refuseRejected(c);
          if (c.botId && row.bot_id && c.botId !== row.bot_id) {
            throw unprocessable(
              `This token belongs to a different bot${c.username ? ` (@${c.username})` : ''}; add it as a ` +
                'new bot instead.',
              [{ path: 'body/token', message: 'belongs to a different bot' }],
              'different_bot',
            );
          }
          if (await botIdTaken(core, c.botId, row.id))
            throw conflict('This bot is already registered with Herald.', 'bot_exists');
        } catch (err) {
          await botRuntime(core).changed(row.id);
          throw err;
        }
        if (row.mode === 'webhook' && mode === 'polling') {
          await driver
            .deleteWebhook(
              driverContext(core, { kind: row.kind, token, api_root: apiRoot }),
              token,
              deadline(BOT_CALL_TIMEOUT_MS),
            )
            .catch(() => {});
        }
      }
      // What the bot service now holds: no webhook in polling mode; a failed registration leaves the previous one.
      const keyId = mode === 'polling' ? null : (c.webhookKeyId ?? row.webhook_key_id ?? null);
      await updateRow(
        core.db,
        'bots',
        {
          name: b.name ?? row.name,
          token: token ? core.atRest.seal(token) : '',
          mode,
          api_root: apiRoot,
          bot_id: c.botId ?? row.bot_id,
          username: c.username ?? row.username,
          webhook_key_id: keyId,
          status: c.status,
          status_detail: c.detail,
          updated_at: nowIso(core),
        },
        { id: row.id, user_id: user.id },
      );
      if (reconnect) await botRuntime(core).changed(row.id);
      // Target instances hold the bot token they were built with.
      if (token !== current || apiRoot !== (row.api_root ?? null))
        for (const t of await targetsUsing(core, row)) await core.plugins.dropTarget(t.id);
      return botView(await get(row.id, user.id));
    },
  );

  app.delete(
    '/api/bots/:id',
    {
      schema: {
        tags: ['relay'],
        params: IdParams,
        response: { ...noContent('Deleted.'), ...errors([409, 'Targets still send through this bot (`bot_in_use`).']) },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const row = await get(req.params.id, user.id);
      const users = await targetsUsing(core, row);
      if (users.length) {
        throw conflict(
          `This bot sends for ${users.length === 1 ? 'the target' : 'the targets'} ` +
            `${users.map((t) => `"${t.name}"`).join(', ')}; delete them or move them to another bot first.`,
          'bot_in_use',
          { targets: users.map((t) => t.name) },
        );
      }
      await botRuntime(core).removed(row.id);
      const driver = botDriver(core, row.kind);
      if (driver && row.mode === 'webhook')
        await driver
          .deleteWebhook(driverContext(core, row), core.atRest.openLenient(row.token), deadline(5000))
          .catch(() => {});
      await core.db.run('DELETE FROM bots WHERE id = ? AND user_id = ?', [row.id, user.id]);
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/bots/:id/chats',
    {
      schema: {
        tags: ['relay'],
        params: IdParams,
        querystring: ListQuery,
        response: { ...ok('The chats the bot has seen (`chats`), newest first.', BotChatList) },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const bot = await get(req.params.id, user.id);
      const params: unknown[] = [bot.id, user.id];
      const rows = await core.db.all<BotChatDbRow>(
        `SELECT * FROM bot_chats WHERE bot_id = ? AND user_id = ?${pageSql('', req.query, params)}`,
        params as never[],
      );
      return {
        chats: rows.map((r) => ({
          id: r.id,
          ...botChatFieldsOf(r),
          last_seen_at: r.last_seen_at,
          created_at: r.created_at,
        })),
      };
    },
  );
}
