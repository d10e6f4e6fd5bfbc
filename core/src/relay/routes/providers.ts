/**
 * Providers: `GET, POST /api/providers`, `GET, PATCH, DELETE /api/providers/{id}`, `GET
 * /api/providers/{id}/webhook-log`.
 */

import type { FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import Type, { type Static } from 'typebox';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { Database as Db } from '../../db/database.ts';
import { insertRow, updateRow } from '../../db/rows.ts';
import { newId } from '../../http/ids.ts';
import { conflict, unprocessable } from '../../http/problem.ts';
import { created, errors, IdParams, ListQuery, noContent, ok } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import { redactObject } from '../../logging/redact.ts';
import type { Locale, ProviderDefinition } from '../../plugin-api/index.ts';
import { outboundAllowOf, providerRowFrom } from '../../plugins/host.ts';
import type { LoadedPlugin } from '../../plugins/loader.ts';
import { pickLocale } from '../../plugins/locales.ts';
import {
  ProviderCreateBody,
  type ProviderDbRow,
  ProviderList,
  ProviderPatchBody,
  ProviderView,
  providerSettingsFrom,
  providerSettingsOf,
} from '../definitions/provider.ts';
import { WebhookLog } from '../definitions/webhook-log.ts';
import { newWebhookToken, webhookConnection } from '../inbound/dialects.ts';
import { payloadLogPage } from '../inbound/payload-log.ts';
import { invalidConfig, nowIso, owned, pageSql } from './common.ts';
import { configRefused, underConfig } from './config-problems.ts';
import { outboundAllowInput, outboundAllowWarnings } from './outbound-allow.ts';
import { maskSecrets, restoreMasked } from './secrets.ts';
import { maskUrlCredentials, withUrlCredentialProblems } from './url-credentials.ts';

type Provider = LoadedPlugin & { def: ProviderDefinition };
const START_WAIT_MS = 5000;

/**
 * The top-level fields the enabled provider plugins declare as config aliases (`configAliases`),
 * each typed by its plugin's config schema without the default (a default would fill the field in
 * on every request, for every kind). Two plugins declaring one name accept either's values.
 */
function aliasFields(core: Core): Record<string, TSchema> {
  const found = new Map<string, TSchema[]>();
  for (const p of core.plugins.plugins.values()) {
    if (p.kind !== 'provider') continue;
    const props = (p.def.manifest.configSchema as { properties?: Record<string, TSchema> }).properties ?? {};
    for (const a of p.configAliases) {
      const { default: _default, ...schema } = props[a] as TSchema & { default?: unknown };
      found.set(a, [...(found.get(a) ?? []), schema as TSchema]);
    }
  }
  return Object.fromEntries(
    [...found].map(([a, list]) => [a, Type.Optional(list.length === 1 ? list[0]! : Type.Union(list))]),
  );
}

/** Splits the top-level aliases (fields not among `known`) off a request body. */
function aliasesOf(body: object, known: TSchema): Record<string, unknown> {
  const fixed = Object.keys((known as { properties: Record<string, unknown> }).properties);
  return Object.fromEntries(Object.entries(body).filter(([k, v]) => !fixed.includes(k) && v !== undefined));
}

/**
 * The provider as the API shows it: secrets masked; for webhook kinds the URL to paste
 * (`webhook_url`), for a kind that speaks another service's dialect the values its apps ask for
 * one by one (`webhook_connection`, labelled in `locale`), the plugin's example command
 * (`webhook_example`), and whether a kind that takes mail waits for the SMTP listener.
 */
export function providerView(core: Core, row: ProviderDbRow, locale: Locale = 'en'): Static<typeof ProviderView> {
  const plugin = core.plugins.provider(row.kind);
  const connection =
    plugin?.def.manifest.ingest === 'webhook' ? webhookConnection(core, plugin, row.webhook_token ?? '', locale) : null;
  const { config: raw, ...settings } = providerSettingsOf(row);
  // A kind that is no longer enabled has no schema to say what is secret: mask by field name.
  const { config: unmasked, secrets_set } = plugin
    ? maskSecrets(raw, plugin.secretPaths)
    : { config: redactObject(raw), secrets_set: [] as string[] };
  const config = maskUrlCredentials(unmasked, plugin?.secretPaths ?? []);
  return {
    id: row.id,
    kind: row.kind,
    ...settings,
    config,
    secrets_set,
    // The plugin's documented top-level aliases of config fields (the generic webhook's auth settings).
    ...Object.fromEntries((plugin?.configAliases ?? []).map((a) => [a, config[a] ?? null])),
    status: row.status,
    status_detail: row.status_detail ?? null,
    webhook_url: connection?.url ?? null,
    webhook_connection: connection?.fields ?? null,
    webhook_example: connection?.example ?? null,
    // A kind that takes mail while the SMTP listener is off: only the webhook URL reaches it.
    smtp_listener_off: Boolean(connection && plugin?.def.manifest.mail && !core.config.smtp),
    core_managed: plugin?.def.manifest.coreManaged === true,
    plugin_enabled: Boolean(plugin),
    outbound_allow: outboundAllowOf(row.outbound_allow),
    outbound_allow_warnings: outboundAllowWarnings(row.outbound_allow),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The caller's language for labels: the user's own, else Accept-Language, else English. */
const localeOf = (req: FastifyRequest): Locale =>
  pickLocale({ user: caller(req).locale, acceptLanguage: req.headers['accept-language'] });

function creatableKinds(core: Core): string[] {
  return [...core.plugins.plugins.values()]
    .filter((p) => p.kind === 'provider' && !p.def.manifest.coreManaged)
    .map((p) => p.id)
    .sort();
}

/**
 * Merges masked secrets and top-level aliases into the config (the stored one when none is sent),
 * validates it against the plugin's schema and its own `validateConfig` hook, and returns it as it
 * is stored: its secrets sealed.
 */
function prepare(
  core: Core,
  plugin: Provider,
  input: { config?: Record<string, unknown>; aliases: Record<string, unknown> },
  stored?: ProviderDbRow,
): Record<string, unknown> {
  const storedConfig = stored
    ? core.atRest.openConfigLenient(Db.json<Record<string, unknown>>(stored.config, {}), plugin.secretPaths)
    : undefined;
  for (const a of Object.keys(input.aliases)) {
    if (!plugin.configAliases.includes(a)) {
      throw unprocessable(
        `The field "${a}" does not apply to "${plugin.id}" providers; set this kind's settings inside config.`,
        [{ path: `body/${a}`, message: 'is not an allowed field for this kind' }],
      );
    }
  }
  const { config, unresolved } = restoreMasked(input.config ?? storedConfig ?? {}, storedConfig, plugin.secretPaths);
  if (unresolved.length) {
    throw unprocessable(
      `The config holds the mask "********" where no secret is stored (${unresolved.join(', ')}); send the real value.`,
      unresolved.map((p) => ({
        path: `body/config/${p.replaceAll('.', '/')}`,
        message: 'is masked but nothing is stored',
      })),
    );
  }
  const inConfig = new Set(Object.keys(input.config ?? {}));
  for (const a of plugin.configAliases) {
    if (a in input.aliases) config[a] = input.aliases[a];
    else if (!(a in config) && storedConfig && a in storedConfig) config[a] = storedConfig[a];
  }
  const what = `configuration of a ${plugin.def.manifest.displayName} provider`;
  // Fields the schema does not declare are refused in a config the caller sent, dropped from a stored one.
  const cfg = plugin.validateConfig(config, { undeclared: input.config !== undefined ? 'refuse' : 'drop' });
  if (!cfg.ok) throw invalidConfig('config', what, cfg.errors, cfg.undeclared);
  // An address with a login in a plain field is refused in a config the caller sent (url-credentials.ts).
  const own = plugin.checkConfig(cfg.value);
  const problems = input.config !== undefined ? withUrlCredentialProblems(own, cfg.value, plugin.secretPaths) : own;
  if (problems.length) {
    // A problem with an alias the request did not put in its config points at the top-level field.
    throw configRefused(what, problems, (path) => {
      const field = path.split('/')[1] ?? '';
      return plugin.configAliases.includes(field) && !inConfig.has(field) ? `body/${path.slice(1)}` : underConfig(path);
    });
  }
  return core.atRest.sealConfig(cfg.value, plugin.secretPaths);
}

/** (Re)starts the instance, waiting a little so the response can carry its first status. */
export async function restartProvider(core: Core, row: ProviderDbRow): Promise<void> {
  const started = core.plugins
    .startProvider(providerRowFrom(row))
    .catch((err) => core.logs.get('relay').error({ err, provider_id: row.id }, 'provider start failed'));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    started,
    new Promise<void>((r) => {
      timer = setTimeout(r, START_WAIT_MS);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}

export async function providerRoutes(app: App, core: Core): Promise<void> {
  const auth = requireUser(core);
  const aliases = aliasFields(core);
  const createBody = Type.Object({ ...ProviderCreateBody.properties, ...aliases }, { additionalProperties: false });
  const patchBody = Type.Object({ ...ProviderPatchBody.properties, ...aliases }, { additionalProperties: false });
  const get = (id: string, userId: string) => owned<ProviderDbRow>(core, 'providers', id, userId, 'Provider');

  app.get(
    '/api/providers',
    {
      schema: {
        tags: ['relay'],
        summary: 'List your providers',
        querystring: ListQuery,
        response: { ...ok('Your providers (`providers`), newest first, secrets masked.', ProviderList) },
      },
      preHandler: auth,
    },
    async (req) => {
      const params: unknown[] = [caller(req).id];
      const rows = await core.db.all<ProviderDbRow>(
        `SELECT * FROM providers WHERE user_id = ?${pageSql('', req.query, params)}`,
        params as never[],
      );
      return { providers: rows.map((r) => providerView(core, r, localeOf(req))) };
    },
  );

  app.post(
    '/api/providers',
    {
      schema: {
        tags: ['relay'],
        summary: 'Create a provider (an instance of a provider plugin)',
        body: createBody,
        response: {
          ...created(
            'The new provider, secrets masked; a webhook kind with the URL to paste (`webhook_url`).',
            ProviderView,
          ),
          ...errors([403, 'Only an administrator may set `outbound_allow`.']),
        },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const b = req.body;
      const plugin = core.plugins.provider(b.kind);
      if (!plugin) {
        throw unprocessable(
          `Unknown provider kind "${b.kind}"; the enabled kinds are: ${creatableKinds(core).join(', ') || 'none'}.`,
          [{ path: 'body/kind', message: 'is not an enabled provider kind' }],
          'unknown_kind',
        );
      }
      if (plugin.def.manifest.coreManaged) {
        throw unprocessable(
          `Providers of kind "${b.kind}" are created by the service (one per user); change its settings ` +
            'under /api/self-monitoring.',
          [{ path: 'body/kind', message: 'is managed by the service' }],
          'core_managed',
        );
      }
      const config = prepare(core, plugin, { config: b.config, aliases: aliasesOf(req.body, ProviderCreateBody) });
      const allow = outboundAllowInput(user, b.outbound_allow, undefined, core.logs.get('relay')) ?? null;
      const id = newId();
      const now = nowIso(core);
      const settings = providerSettingsFrom({ name: b.name, config, enabled: b.enabled });
      await insertRow(core.db, 'providers', {
        id,
        user_id: user.id,
        kind: b.kind,
        ...settings,
        webhook_token: newWebhookToken(plugin),
        status: settings.enabled ? 'pending' : 'disabled',
        outbound_allow: allow,
        created_at: now,
        updated_at: now,
      });
      await restartProvider(core, await get(id, user.id));
      reply.code(201);
      return providerView(core, await get(id, user.id), localeOf(req));
    },
  );

  app.get(
    '/api/providers/:id',
    {
      schema: {
        tags: ['relay'],
        summary: 'Read a provider',
        params: IdParams,
        response: { ...ok('The provider, secrets masked.', ProviderView) },
      },
      preHandler: auth,
    },
    async (req) => {
      return providerView(core, await get(req.params.id, caller(req).id), localeOf(req));
    },
  );

  app.patch(
    '/api/providers/:id',
    {
      schema: {
        tags: ['relay'],
        summary: 'Change a provider',
        params: IdParams,
        body: patchBody,
        response: {
          ...ok('The changed provider, secrets masked.', ProviderView),
          ...errors([403, 'Only an administrator may set `outbound_allow`.']),
        },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const row = await get(req.params.id, user.id);
      const b = req.body;
      const plugin = core.plugins.provider(row.kind);
      if (!plugin)
        throw unprocessable(
          `Provider kind "${row.kind}" is not enabled on this service, so this provider cannot be changed; ` +
            'enable its plugin or delete the provider.',
          undefined,
          'kind_not_enabled',
          { kind: row.kind },
        );
      const prepared = prepare(
        core,
        plugin,
        { config: b.config, aliases: aliasesOf(req.body, ProviderPatchBody) },
        row,
      );
      const enabled = b.enabled ?? Db.bool(row.enabled);
      const sent = outboundAllowInput(user, b.outbound_allow, row.outbound_allow, core.logs.get('relay'));
      const allow =
        sent === undefined
          ? outboundAllowOf(row.outbound_allow).length
            ? outboundAllowOf(row.outbound_allow)
            : null
          : sent;
      await updateRow(
        core.db,
        'providers',
        {
          name: b.name ?? row.name,
          config: prepared,
          enabled,
          status: enabled ? 'pending' : 'disabled',
          status_detail: null,
          outbound_allow: allow,
          updated_at: nowIso(core),
        },
        { id: row.id, user_id: user.id },
      );
      await restartProvider(core, await get(row.id, user.id));
      return providerView(core, await get(row.id, user.id), localeOf(req));
    },
  );

  app.delete(
    '/api/providers/:id',
    {
      schema: {
        tags: ['relay'],
        summary: 'Delete a provider and its trackers',
        params: IdParams,
        response: {
          ...noContent('Deleted, with its trackers.'),
          ...errors([
            409,
            'The self-monitoring provider belongs to the account and cannot be deleted (`core_managed`).',
          ]),
        },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const row = await get(req.params.id, user.id);
      if (core.plugins.provider(row.kind)?.def.manifest.coreManaged) {
        throw conflict(
          'The self-monitoring provider belongs to the account and cannot be deleted; disable its tracking ' +
            'under /api/self-monitoring instead.',
          'core_managed',
        );
      }
      await core.plugins.stopProvider(row.id);
      await core.db.run('DELETE FROM providers WHERE id = ? AND user_id = ?', [row.id, user.id]);
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/providers/:id/webhook-log',
    {
      schema: {
        tags: ['relay'],
        summary: 'The webhook requests this provider received, newest first',
        params: IdParams,
        querystring: ListQuery,
        response: { ...ok('The webhook requests this provider received, newest first.', WebhookLog) },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const row = await get(req.params.id, user.id);
      return payloadLogPage(core, { userId: user.id, providerId: row.id }, req.query);
    },
  );
}
