/** Providers: `GET, POST /api/providers`, `GET, PATCH, DELETE /api/providers/{id}`, `GET /api/providers/{id}/webhook-log`. */
import Type from 'typebox';
import type { Static } from 'typebox';
import type { App } from '../../http/server.ts';
import type { Core } from '../../core.ts';
import { requireUser, caller } from '../../auth/guard.ts';
import { IdParams, ListQuery } from '../../http/schemas.ts';
import { conflict, unprocessable } from '../../http/problem.ts';
import { newId, randomToken } from '../../http/ids.ts';
import { Database as Db } from '../../db/database.ts';
import { providerRowFrom } from '../../plugins/host.ts';
import type { LoadedPlugin } from '../../plugins/loader.ts';
import type { ProviderDefinition } from '../../plugin-api/index.ts';
import { redactObject, redactText } from '../../logging/redact.ts';
import { invalidConfig, nowIso, owned, pageSql, type Page } from './common.ts';
import { maskSecrets, restoreMasked } from './secrets.ts';

const AuthMode = Type.Union([Type.Literal('none'), Type.Literal('bearer'), Type.Literal('hmac_sha256')]);
const Config = Type.Object({}, { additionalProperties: true });
const Name = Type.String({ minLength: 1, maxLength: 200 });

const CreateBody = Type.Object({
  kind: Type.String({ minLength: 1, maxLength: 64 }),
  name: Name,
  config: Config,
  enabled: Type.Optional(Type.Boolean()),
  auth_mode: Type.Optional(AuthMode),
  acknowledge_unauthenticated: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });

const PatchBody = Type.Object({
  name: Type.Optional(Name),
  config: Type.Optional(Config),
  enabled: Type.Optional(Type.Boolean()),
  auth_mode: Type.Optional(AuthMode),
  acknowledge_unauthenticated: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });

type Provider = LoadedPlugin & { def: ProviderDefinition };
type Row = Record<string, any>;
const START_WAIT_MS = 5000;

/** A plugin whose config carries `auth_mode` (the generic webhook) gets the auth columns and their rules. */
const hasAuthMode = (p: Provider): boolean => Boolean((p.def.manifest.configSchema as { properties?: Record<string, unknown> })?.properties?.auth_mode);

/** The provider as the API shows it: secrets masked, webhook URL for webhook kinds. */
export function providerView(core: Core, row: Row) {
  const plugin = core.plugins.provider(row.kind);
  const raw = Db.json<Record<string, unknown>>(row.config, {});
  // A kind that is no longer enabled has no schema to say what is secret: mask by field name.
  const { config, secrets_set } = plugin ? maskSecrets(raw, plugin.secretPaths) : { config: redactObject(raw), secrets_set: [] as string[] };
  return {
    id: row.id as string, kind: row.kind as string, name: row.name as string, enabled: Db.bool(row.enabled),
    config, secrets_set,
    auth_mode: (row.auth_mode ?? null) as string | null,
    acknowledge_unauthenticated: Db.bool(row.acknowledge_unauthenticated),
    status: row.status as string, status_detail: (row.status_detail ?? null) as string | null,
    webhook_url: plugin?.def.manifest.ingest === 'webhook' ? core.plugins.webhookUrl(row as { webhook_token: string }) : null,
    core_managed: plugin?.def.manifest.coreManaged === true,
    plugin_enabled: Boolean(plugin),
    created_at: row.created_at as string, updated_at: row.updated_at as string,
  };
}

function creatableKinds(core: Core): string[] {
  return [...core.plugins.plugins.values()].filter((p) => p.kind === 'provider' && !p.def.manifest.coreManaged).map((p) => p.id).sort();
}

/** Merges masked secrets, applies the auth rules and validates the config against the plugin. */
function prepare(plugin: Provider, input: { config: Record<string, unknown>; auth_mode?: string; acknowledge_unauthenticated?: boolean }, stored?: Row) {
  const storedConfig = stored ? Db.json<Record<string, unknown>>(stored.config, {}) : undefined;
  const { config, unresolved } = restoreMasked(input.config, storedConfig, plugin.secretPaths);
  if (unresolved.length) {
    throw unprocessable(`The config holds the mask "********" where no secret is stored (${unresolved.join(', ')}); send the real value.`,
      unresolved.map((p) => ({ path: `body/config/${p.replaceAll('.', '/')}`, message: 'is masked but nothing is stored' })));
  }
  let authMode: string | null = null;
  let ack = false;
  if (hasAuthMode(plugin)) {
    authMode = input.auth_mode ?? (config.auth_mode as string | undefined) ?? stored?.auth_mode ?? 'hmac_sha256';
    ack = input.acknowledge_unauthenticated ?? (config.acknowledge_unauthenticated as boolean | undefined) ?? (stored ? Db.bool(stored.acknowledge_unauthenticated) : false);
    if (!['none', 'bearer', 'hmac_sha256'].includes(authMode!)) {
      throw unprocessable('auth_mode must be none, bearer or hmac_sha256.', [{ path: 'body/auth_mode', message: 'must be none, bearer or hmac_sha256' }]);
    }
    if (authMode === 'none' && ack !== true) {
      throw unprocessable('auth_mode "none" accepts requests from anyone who knows the URL; set acknowledge_unauthenticated to true to confirm, or choose bearer or hmac_sha256.',
        [{ path: 'body/acknowledge_unauthenticated', message: 'must be true when auth_mode is none' }], 'unauthenticated_not_acknowledged');
    }
    // The plugin reads both from its config; the columns serve the API and the inbound route.
    config.auth_mode = authMode;
    config.acknowledge_unauthenticated = ack;
  } else if (input.auth_mode !== undefined || input.acknowledge_unauthenticated !== undefined) {
    throw unprocessable(`auth_mode and acknowledge_unauthenticated apply only to generic webhook providers, not to "${plugin.id}".`,
      [{ path: `body/${input.auth_mode !== undefined ? 'auth_mode' : 'acknowledge_unauthenticated'}`, message: 'is not an allowed field for this kind' }]);
  }
  const cfg = plugin.validateConfig(config);
  if (!cfg.ok) throw invalidConfig('config', `configuration of a ${plugin.def.manifest.displayName} provider`, cfg.errors);
  return { config: cfg.value, authMode, ack };
}

/** (Re)starts the instance, waiting a little so the response can carry its first status. */
async function restart(core: Core, row: Row): Promise<void> {
  const started = core.plugins.startProvider(providerRowFrom(row)).catch((err) => core.logs.get('relay').error({ err, provider_id: row.id }, 'provider start failed'));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([started, new Promise<void>((r) => { timer = setTimeout(r, START_WAIT_MS); timer.unref(); })]);
  clearTimeout(timer);
}

export async function providerRoutes(app: App, core: Core): Promise<void> {
  const auth = requireUser(core);
  const get = (id: string, userId: string) => owned(core, 'providers', id, userId, 'Provider');

  app.get('/api/providers', { schema: { tags: ['relay'], summary: 'List your providers', querystring: ListQuery }, preHandler: auth }, async (req) => {
    const params: unknown[] = [caller(req).id];
    const rows = await core.db.all(`SELECT * FROM providers WHERE user_id = ?${pageSql('', req.query as Page, params)}`, params as never[]);
    return { providers: rows.map((r) => providerView(core, r)) };
  });

  app.post('/api/providers', { schema: { tags: ['relay'], summary: 'Create a provider (an instance of a provider plugin)', body: CreateBody }, preHandler: auth }, async (req, reply) => {
    const user = caller(req);
    const b = req.body as Static<typeof CreateBody>;
    const plugin = core.plugins.provider(b.kind);
    if (!plugin) {
      throw unprocessable(`Unknown provider kind "${b.kind}"; the enabled kinds are: ${creatableKinds(core).join(', ') || 'none'}.`,
        [{ path: 'body/kind', message: 'is not an enabled provider kind' }], 'unknown_kind');
    }
    if (plugin.def.manifest.coreManaged) {
      throw unprocessable(`Providers of kind "${b.kind}" are created by the service (one per user); change its settings under /api/self-monitoring.`,
        [{ path: 'body/kind', message: 'is managed by the service' }], 'core_managed');
    }
    const p = prepare(plugin, { config: b.config as Record<string, unknown>, auth_mode: b.auth_mode, acknowledge_unauthenticated: b.acknowledge_unauthenticated });
    const id = newId();
    const now = nowIso(core);
    const enabled = b.enabled ?? true;
    await core.db.run(`INSERT INTO providers (id, user_id, kind, name, config, enabled, webhook_token, auth_mode, acknowledge_unauthenticated, status, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [id, user.id, b.kind, b.name, p.config, enabled, randomToken(), p.authMode, p.ack, enabled ? 'pending' : 'disabled', now, now]);
    await restart(core, await get(id, user.id));
    reply.code(201);
    return providerView(core, await get(id, user.id));
  });

  app.get('/api/providers/:id', { schema: { tags: ['relay'], summary: 'Read a provider', params: IdParams }, preHandler: auth }, async (req) => {
    return providerView(core, await get((req.params as { id: string }).id, caller(req).id));
  });

  app.patch('/api/providers/:id', { schema: { tags: ['relay'], summary: 'Change a provider', params: IdParams, body: PatchBody }, preHandler: auth }, async (req) => {
    const user = caller(req);
    const row = await get((req.params as { id: string }).id, user.id);
    const b = req.body as Static<typeof PatchBody>;
    const plugin = core.plugins.provider(row.kind);
    if (!plugin) throw unprocessable(`Provider kind "${row.kind}" is not enabled on this service, so this provider cannot be changed; enable its plugin or delete the provider.`, undefined, 'kind_not_enabled');
    const config = (b.config as Record<string, unknown> | undefined) ?? Db.json<Record<string, unknown>>(row.config, {});
    const p = prepare(plugin, { config, auth_mode: b.auth_mode, acknowledge_unauthenticated: b.acknowledge_unauthenticated }, row);
    const enabled = b.enabled ?? Db.bool(row.enabled);
    await core.db.run(`UPDATE providers SET name = ?, config = ?, enabled = ?, auth_mode = ?, acknowledge_unauthenticated = ?, status = ?, status_detail = NULL, updated_at = ?
      WHERE id = ? AND user_id = ?`, [b.name ?? row.name, p.config, enabled, p.authMode, p.ack, enabled ? 'pending' : 'disabled', nowIso(core), row.id, user.id]);
    await restart(core, await get(row.id, user.id));
    return providerView(core, await get(row.id, user.id));
  });

  app.delete('/api/providers/:id', { schema: { tags: ['relay'], summary: 'Delete a provider and its trackers', params: IdParams }, preHandler: auth }, async (req, reply) => {
    const user = caller(req);
    const row = await get((req.params as { id: string }).id, user.id);
    if (core.plugins.provider(row.kind)?.def.manifest.coreManaged) {
      throw conflict('The self-monitoring provider belongs to the account and cannot be deleted; disable its tracking under /api/self-monitoring instead.', 'core_managed');
    }
    await core.plugins.stopProvider(row.id);
    await core.db.run('DELETE FROM providers WHERE id = ? AND user_id = ?', [row.id, user.id]);
    return reply.code(204).send();
  });

  app.get('/api/providers/:id/webhook-log', { schema: { tags: ['relay'], summary: 'The webhook requests this provider received, newest first', params: IdParams, querystring: ListQuery }, preHandler: auth }, async (req) => {
    const user = caller(req);
    const row = await get((req.params as { id: string }).id, user.id);
    const params: unknown[] = [row.id, user.id];
    const rows = await core.db.all(`SELECT * FROM webhook_payload_log WHERE provider_id = ? AND user_id = ?${pageSql('', req.query as Page, params)}`, params as never[]);
    return {
      entries: rows.map((r) => ({
        id: r.id, received_at: r.received_at, status_code: Number(r.status_code), error_message: r.error_message ?? null,
        // Stored redacted by the inbound route; redacted again in case an older row was not.
        payload_excerpt: r.payload_excerpt == null ? null : redactText(String(r.payload_excerpt)),
        source_ip: r.source_ip ?? null, event_ids: Db.json<string[]>(r.event_ids, []),
      })),
    };
  });
}
