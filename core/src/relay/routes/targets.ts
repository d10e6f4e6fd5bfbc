/** Targets: `GET, POST /api/targets`, `GET, PATCH, DELETE /api/targets/{id}`, `POST /api/targets/{id}/test`. */

import Type, { type Static } from 'typebox';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { Database as Db } from '../../db/database.ts';
import { insertRow, updateRow } from '../../db/rows.ts';
import { newId } from '../../http/ids.ts';
import { unprocessable } from '../../http/problem.ts';
import { created, errors, IdParams, ListQuery, noContent, ok } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import { redactObject } from '../../logging/redact.ts';
import type { Locale as LocaleName } from '../../plugin-api/index.ts';
import { outboundAllowOf, targetRowFrom } from '../../plugins/host.ts';
import { APPRISE_SCHEMES, AppriseUrlError, type ImportedTarget, importAppriseUrl } from '../apprise-url.ts';
import {
  TargetCreateBody,
  type TargetDbRow,
  TargetList,
  TargetPatchBody,
  TargetView,
  targetSettingsFrom,
  targetSettingsOf,
} from '../definitions/target.ts';
import { LocaleSchema as Locale, NameSchema as Name } from '../vocabulary.ts';
import { createBot } from './bots.ts';
import { invalidConfig, nowIso, owned, pageSql, relay } from './common.ts';
import { configRefused, underConfig } from './config-problems.ts';
import { outboundAllowInput, outboundAllowWarnings } from './outbound-allow.ts';
import { maskSecrets, restoreMasked } from './secrets.ts';
import { maskUrlCredentials, withUrlCredentialProblems } from './url-credentials.ts';

const FromUrlBody = Type.Object(
  {
    url: Type.String({
      minLength: 3,
      maxLength: 4096,
      description: 'An Apprise URL, e.g. ntfys://ntfy.example.org/alerts',
    }),
    name: Type.Optional(Name),
    locale: Type.Optional(Locale),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
/** What `POST /api/targets/parse-url` reads from an Apprise URL. */
export const ParsedUrl = Type.Object({
  kind: Type.String(),
  config: Type.Record(Type.String(), Type.Unknown()),
  name: Type.String(),
  kind_enabled: Type.Boolean(),
});
/** The outcome of a test send (a failed send is an outcome too). */
export const TestOutcome = Type.Object({
  ok: Type.Boolean(),
  detail: Type.String(),
  status_code: Type.Optional(Type.Integer()),
});
const TestBody = Type.Union([
  Type.Object({ locale: Type.Optional(Locale) }, { additionalProperties: false }),
  Type.Null(),
]);

/**
 * The problem code of an Apprise URL the importer could not read (spelled out, so each has its text in the web client).
 */
function appriseCode(err: AppriseUrlError): string {
  if (err.code === 'apprise_scheme_unsupported') return 'apprise_scheme_unsupported';
  if (err.code === 'apprise_url_incomplete') return 'apprise_url_incomplete';
  return 'apprise_url_invalid';
}

/** The target as the API shows it, secrets masked. */
export function targetView(core: Core, row: TargetDbRow): Static<typeof TargetView> {
  const plugin = core.plugins.target(row.kind);
  const settings = targetSettingsOf(row);
  const { config, secrets_set } = plugin
    ? maskSecrets(settings.config, plugin.secretPaths)
    : { config: redactObject(settings.config), secrets_set: [] as string[] };
  return {
    id: row.id,
    kind: row.kind,
    ...settings,
    config: maskUrlCredentials(config, plugin?.secretPaths ?? []),
    secrets_set,
    consecutive_failures: Number(row.consecutive_failures ?? 0),
    last_error: row.last_error ?? null,
    plugin_enabled: Boolean(plugin),
    outbound_allow: outboundAllowOf(row.outbound_allow),
    outbound_allow_warnings: outboundAllowWarnings(row.outbound_allow),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function targetKinds(core: Core): string[] {
  return [...core.plugins.plugins.values()]
    .filter((p) => p.kind === 'target')
    .map((p) => p.id)
    .sort();
}

/**
 * Restores masked secrets, validates against the plugin, and checks that a named bot is the
 * caller's. `incoming` undefined keeps the stored config. Returns the config as stored: secrets sealed.
 */
async function prepare(
  core: Core,
  userId: string,
  kind: string,
  incoming: Record<string, unknown> | undefined,
  stored?: TargetDbRow,
): Promise<Record<string, unknown>> {
  const plugin = core.plugins.target(kind);
  if (!plugin) {
    throw unprocessable(
      `Unknown target kind "${kind}"; the enabled kinds are: ${targetKinds(core).join(', ') || 'none'}.`,
      [{ path: 'body/kind', message: 'is not an enabled target kind' }],
      'unknown_kind',
    );
  }
  const storedConfig = stored
    ? core.atRest.openConfigLenient(Db.json(stored.config, {}), plugin.secretPaths)
    : undefined;
  const { config, unresolved } = restoreMasked(incoming ?? storedConfig ?? {}, storedConfig, plugin.secretPaths);
  if (unresolved.length) {
    throw unprocessable(
      `The config holds the mask "********" where no secret is stored (${unresolved.join(', ')}); send the real value.`,
      unresolved.map((p) => ({
        path: `body/config/${p.replaceAll('.', '/')}`,
        message: 'is masked but nothing is stored',
      })),
    );
  }
  const what = `configuration of a ${plugin.def.manifest.displayName} target`;
  // Fields the schema does not declare are refused in a config the caller sent, dropped from a stored one.
  const cfg = plugin.validateConfig(config, { undeclared: incoming !== undefined ? 'refuse' : 'drop' });
  if (!cfg.ok) throw invalidConfig('config', what, cfg.errors, cfg.undeclared);
  // An address with a login in a plain field is refused in a config the caller sent (url-credentials.ts).
  const own = plugin.checkConfig(cfg.value);
  const problems = incoming !== undefined ? withUrlCredentialProblems(own, cfg.value, plugin.secretPaths) : own;
  if (problems.length) throw configRefused(what, problems, underConfig);
  const botId = cfg.value.bot_id;
  if (botId !== undefined) {
    const bot =
      typeof botId === 'string'
        ? await core.db.get<{ id: string; kind: string }>('SELECT id, kind FROM bots WHERE id = ? AND user_id = ?', [
            botId,
            userId,
          ])
        : undefined;
    if (!bot)
      throw unprocessable(
        'config.bot_id does not name one of your messaging bots; add the bot under /api/bots first.',
        [{ path: 'body/config/bot_id', message: 'is not one of your bots' }],
        'unknown_bot',
      );
    if (bot.kind !== kind)
      throw unprocessable(
        `config.bot_id names a ${bot.kind} bot, but this is a ${kind} target.`,
        [{ path: 'body/config/bot_id', message: `must be a ${kind} bot` }],
        'wrong_bot_kind',
      );
  }
  return core.atRest.sealConfig(cfg.value, plugin.secretPaths);
}

export async function targetRoutes(app: App, core: Core): Promise<void> {
  const auth = requireUser(core);
  const get = (id: string, userId: string) => owned<TargetDbRow>(core, 'targets', id, userId, 'Target');

  app.get(
    '/api/targets',
    {
      schema: {
        tags: ['relay'],
        summary: 'List your targets',
        querystring: ListQuery,
        response: { ...ok('Your targets (`targets`), newest first, secrets masked.', TargetList) },
      },
      preHandler: auth,
    },
    async (req) => {
      const params: unknown[] = [caller(req).id];
      const rows = await core.db.all<TargetDbRow>(
        `SELECT * FROM targets WHERE user_id = ?${pageSql('', req.query, params)}`,
        params as never[],
      );
      return { targets: rows.map((r) => targetView(core, r)) };
    },
  );

  app.post(
    '/api/targets',
    {
      schema: {
        tags: ['relay'],
        summary: 'Create a target (an instance of a target plugin)',
        body: TargetCreateBody,
        response: {
          ...created('The new target, secrets masked.', TargetView),
          ...errors([403, 'Only an administrator may set `outbound_allow`.']),
        },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const { kind, outbound_allow, ...settings } = req.body;
      const config = await prepare(core, user.id, kind, settings.config);
      const allow = outboundAllowInput(user, outbound_allow, undefined, core.logs.get('relay')) ?? null;
      const id = newId();
      const now = nowIso(core);
      await insertRow(core.db, 'targets', {
        id,
        user_id: user.id,
        kind,
        ...targetSettingsFrom({ ...settings, config }),
        outbound_allow: allow,
        created_at: now,
        updated_at: now,
      });
      reply.code(201);
      return targetView(core, await get(id, user.id));
    },
  );

  app.post(
    '/api/targets/from-url',
    {
      schema: {
        tags: ['relay'],
        summary: 'Create a target from an Apprise URL',
        description:
          `Reads an Apprise URL (the notation \`apprise\` and Apprise API configurations use) into the ` +
          `target kind and config Herald has for that service, and creates the target as \`POST ` +
          `/api/targets\` does (the config is validated the same way). Schemes: ` +
          `${Object.keys(APPRISE_SCHEMES).join(', ')}. A \`tgram://\` URL uses your Telegram bot with that ` +
          `token, registering it first when you have none. 422 \`apprise_scheme_unsupported\` (param ` +
          `\`scheme\`) for a scheme Herald has no target for, \`apprise_url_invalid\` or ` +
          `\`apprise_url_incomplete\` for a URL it cannot read; nothing is created then.`,
        body: FromUrlBody,
        response: {
          ...created('The new target, secrets masked.', TargetView),
          ...errors([409, "The URL's Telegram bot is registered by another account (`bot_exists`)."]),
        },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const b = req.body;
      let imported: ImportedTarget;
      try {
        imported = importAppriseUrl(b.url);
      } catch (err) {
        if (!(err instanceof AppriseUrlError)) throw err;
        throw unprocessable(err.message, [{ path: 'body/url', message: err.message }], appriseCode(err), err.params);
      }
      if (!core.plugins.target(imported.kind)) {
        throw unprocessable(
          `The ${imported.kind} target kind that this URL needs is not enabled on this service.`,
          [{ path: 'body/url', message: 'needs a target kind that is not enabled' }],
          'unknown_kind',
          { kind: imported.kind },
        );
      }
      const config = { ...imported.config };
      if (imported.botToken) config.bot_id = await botFor(user, imported.kind, imported.botToken);
      const sealed = await prepare(core, user.id, imported.kind, config);
      const id = newId();
      const now = nowIso(core);
      await insertRow(core.db, 'targets', {
        id,
        user_id: user.id,
        kind: imported.kind,
        ...targetSettingsFrom({
          name: b.name ?? imported.suggestedName,
          config: sealed,
          locale: b.locale ?? (user.locale === 'ru' ? 'ru' : 'en'),
          enabled: b.enabled,
        }),
        outbound_allow: null,
        created_at: now,
        updated_at: now,
      });
      reply.code(201);
      return targetView(core, await get(id, user.id));
    },
  );

  app.post(
    '/api/targets/parse-url',
    {
      schema: {
        tags: ['relay'],
        summary: 'Read an Apprise URL into a target kind and config, without creating anything',
        description:
          'What `POST /api/targets/from-url` would create, for a form to fill itself in: `kind`, `config` ' +
          '(with the secrets of the URL, which the caller sent), a suggested `name`, and for a `tgram://` ' +
          'URL the id of your bot with that token (`config.bot_id`, absent when you have none yet). The ' +
          'same 422 answers as from-url.',
        body: Type.Object({ url: FromUrlBody.properties.url }, { additionalProperties: false }),
        response: { ...ok('The target the URL describes: `kind`, `config`, `name`, `kind_enabled`.', ParsedUrl) },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      let imported: ImportedTarget;
      try {
        imported = importAppriseUrl(req.body.url);
      } catch (err) {
        if (!(err instanceof AppriseUrlError)) throw err;
        throw unprocessable(err.message, [{ path: 'body/url', message: err.message }], appriseCode(err), err.params);
      }
      const config = { ...imported.config };
      if (imported.botToken) {
        const bot = await existingBot(user, imported.kind, imported.botToken);
        if (bot) config.bot_id = bot;
      }
      return {
        kind: imported.kind,
        config,
        name: imported.suggestedName,
        kind_enabled: Boolean(core.plugins.target(imported.kind)),
      };
    },
  );

  async function existingBot(user: { id: string }, kind: string, token: string): Promise<string | undefined> {
    const rows = await core.db.all<{ id: string; token: string }>(
      'SELECT id, token FROM bots WHERE user_id = ? AND kind = ? AND bot_id = ?',
      [user.id, kind, token.split(':')[0]!],
    );
    return rows.find((r) => core.atRest.openLenient(r.token) === token)?.id;
  }

  /**
   * The caller's bot of `kind` with `token` (its id is the token's leading number), registered now when there is none.
   */
  async function botFor(user: { id: string; locale: string }, kind: string, token: string): Promise<string> {
    return (
      (await existingBot(user, kind, token)) ??
      createBot(core, user, { name: `Telegram bot ${token.split(':')[0]}`, token, mode: 'polling', kind })
    );
  }

  app.get(
    '/api/targets/:id',
    {
      schema: {
        tags: ['relay'],
        summary: 'Read a target',
        params: IdParams,
        response: { ...ok('The target, secrets masked.', TargetView) },
      },
      preHandler: auth,
    },
    async (req) => targetView(core, await get(req.params.id, caller(req).id)),
  );

  app.patch(
    '/api/targets/:id',
    {
      schema: {
        tags: ['relay'],
        summary: 'Change a target',
        params: IdParams,
        body: TargetPatchBody,
        response: {
          ...ok('The changed target, secrets masked.', TargetView),
          ...errors([403, 'Only an administrator may set `outbound_allow`.']),
        },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const row = await get(req.params.id, user.id);
      const { outbound_allow, ...b } = req.body;
      const config = await prepare(core, user.id, row.kind, b.config, row);
      const sent = outboundAllowInput(user, outbound_allow, row.outbound_allow, core.logs.get('relay'));
      const allow =
        sent === undefined
          ? outboundAllowOf(row.outbound_allow).length
            ? outboundAllowOf(row.outbound_allow)
            : null
          : sent;
      // updated_at is part of the cached instance's key, so the next send builds a fresh instance.
      await updateRow(
        core.db,
        'targets',
        { ...targetSettingsOf(row), ...b, config, outbound_allow: allow, updated_at: nowIso(core) },
        { id: row.id, user_id: user.id },
      );
      await core.plugins.dropTarget(row.id);
      return targetView(core, await get(row.id, user.id));
    },
  );

  app.delete(
    '/api/targets/:id',
    {
      schema: { tags: ['relay'], summary: 'Delete a target', params: IdParams, response: { ...noContent('Deleted.') } },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const row = await get(req.params.id, user.id);
      await core.plugins.dropTarget(row.id);
      await core.db.run('DELETE FROM targets WHERE id = ? AND user_id = ?', [row.id, user.id]);
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/targets/:id/test',
    {
      schema: {
        tags: ['relay'],
        summary: 'Send a test message through a target now',
        params: IdParams,
        body: Type.Optional(TestBody),
        response: {
          ...ok(
            'The outcome of the test send (`ok`, `detail`, `status_code`): a failed send is still answered 200.',
            TestOutcome,
          ),
          ...errors([503, 'The relay pipeline is not running yet (`relay_unavailable`).']),
        },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const row = await get(req.params.id, user.id);
      const locale: LocaleName = req.body?.locale ?? row.locale;
      const result = await relay(core).sendTest(targetRowFrom(row), locale);
      // A failed send is still a successful test run: the outcome is in the body.
      return {
        ok: result.ok,
        detail: result.detail,
        ...(result.status_code !== undefined ? { status_code: result.status_code } : {}),
      };
    },
  );
}
