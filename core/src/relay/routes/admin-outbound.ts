/**
 * Administrators' view of every outbound allow list: `GET /api/admin/outbound-allow` lists the
 * providers and targets of every user with their owner, list and server address (never a secret);
 * `PUT /api/admin/outbound-allow/{provider|target}/{id}` sets one list on anyone's instance — a
 * user's photo library on the NAS needs the administrator to allow that host for that user's provider.
 * Validation is the owners' (outboundAllowInput); the running instance is rebuilt exactly as an
 * owner's PATCH does it (a provider restarts, a target's cached instance is dropped and its
 * `updated_at` moves, which every dispatcher keys its instances by).
 */

import type { Static } from 'typebox';
import Type from 'typebox';
import { caller, requireAdmin } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { Database as Db } from '../../db/database.ts';
import { notFound } from '../../http/problem.ts';
import { ok, Uuid } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import { OUTBOUND_ALLOW_MAX } from '../../net/instance-allow.ts';
import { outboundAllowOf } from '../../plugins/host.ts';
import { WideAllowEntryView } from '../definitions/common.ts';
import type { ProviderDbRow } from '../definitions/provider.ts';
import { OutboundAllowEntrySchema } from '../vocabulary.ts';
import { nowIso } from './common.ts';
import { outboundAllowInput, outboundAllowWarnings } from './outbound-allow.ts';
import { restartProvider } from './providers.ts';

const Kind = Type.Union([Type.Literal('provider'), Type.Literal('target')], {
  description: 'Which kind of record: a provider or a target',
});
const ListQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 500, default: 200, description: 'At most this many rows (default 200)' }),
    ),
    offset: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1_000_000,
        default: 0,
        description: 'Skip this many rows (the `next_offset` of the previous page)',
      }),
    ),
  },
  { additionalProperties: false },
);
const Params = Type.Object({ kind: Kind, id: Uuid });
const PutBody = Type.Object(
  {
    outbound_allow: Type.Union([Type.Array(OutboundAllowEntrySchema, { maxItems: OUTBOUND_ALLOW_MAX }), Type.Null()], {
      description:
        'Private ranges (CIDR or one address) or DNS host names this instance alone may reach; `null` or ' +
        '`[]` clears it',
    }),
  },
  { additionalProperties: false },
);

export const OutboundAllowItem = Type.Object(
  {
    kind: Kind,
    id: Type.String(),
    plugin: Type.String({ description: 'The plugin kind, as in GET /api/plugins' }),
    name: Type.String(),
    enabled: Type.Boolean(),
    plugin_enabled: Type.Boolean({ description: 'Whether the plugin is enabled on this service' }),
    owner: Type.Object({ id: Type.String(), email: Type.String() }),
    outbound_allow: Type.Array(Type.String()),
    outbound_allow_warnings: Type.Array(WideAllowEntryView, {
      description:
        'Entries wider than any private network (0.0.0.0/0, ::/0): accepted, each with a sentence on what it opens',
    }),
    address: Type.Union([Type.String(), Type.Null()], {
      description:
        'The server the instance talks to (scheme, host and port of a URL field, or a host field), never a ' +
        'secret field and never a path or credentials; null when the config names none',
    }),
  },
  { additionalProperties: false },
);
export const OutboundAllowList = Type.Object(
  { items: Type.Array(OutboundAllowItem), next_offset: Type.Union([Type.Integer(), Type.Null()]) },
  { additionalProperties: false },
);

/** A provider or target row with its owner's address (the columns the two tables share are all this reads). */
type Row = ProviderDbRow & { owner_email: string; record: 'provider' | 'target' };

/** The config fields that name the server, best first; a plugin's own secret fields are never read. */
const ADDRESS_FIELDS = ['base_url', 'homeserver_url', 'url', 'poll_url', 'api_root', 'server_url', 'host'];

/**
 * The address an instance's config names, without anything secret: of a URL its scheme, host and
 * port (a path or user info can carry a token), of a host field the host and the `port` field.
 */
export function configAddress(config: Record<string, unknown>, secretPaths: readonly string[]): string | null {
  for (const field of ADDRESS_FIELDS) {
    if (secretPaths.includes(field)) continue;
    const v = config[field];
    if (typeof v !== 'string' || !v.trim()) continue;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) {
      try {
        const u = new URL(v);
        return `${u.protocol}//${u.host}`;
      } catch {
        continue;
      }
    }
    if (!/^[A-Za-z0-9.:[\]-]{1,253}$/.test(v)) continue;
    const port = config.port;
    return typeof port === 'number' && Number.isInteger(port) ? `${v}:${port}` : v;
  }
  return null;
}

function view(core: Core, kind: 'provider' | 'target', row: Row): Static<typeof OutboundAllowItem> {
  const plugin = kind === 'provider' ? core.plugins.provider(row.kind) : core.plugins.target(row.kind);
  return {
    kind,
    id: row.id,
    plugin: row.kind,
    name: row.name,
    enabled: Db.bool(row.enabled),
    plugin_enabled: Boolean(plugin),
    owner: { id: row.user_id, email: row.owner_email },
    outbound_allow: outboundAllowOf(row.outbound_allow),
    outbound_allow_warnings: outboundAllowWarnings(row.outbound_allow),
    // Without the plugin nothing says which fields are secret: no address rather than a guess.
    address: plugin ? configAddress(Db.json<Record<string, unknown>>(row.config, {}), plugin.secretPaths) : null,
  };
}

export async function adminOutboundRoutes(app: App, core: Core): Promise<void> {
  const opts = { preHandler: requireAdmin(core) };
  const tags = ['admin'];
  /** Providers the service runs for itself (self-monitoring) reach nothing outside: left out of the list. */
  const managedKinds = () =>
    [...core.plugins.plugins.values()]
      .filter((p) => p.kind === 'provider' && p.def.manifest.coreManaged)
      .map((p) => p.id);
  const one = async (kind: 'provider' | 'target', id: string): Promise<Row> => {
    const table = kind === 'provider' ? 'providers' : 'targets';
    const row = await core.db.get<Row>(
      `SELECT r.*, u.email AS owner_email FROM ${table} r JOIN users u ON u.id = r.user_id WHERE r.id = ?`,
      [id],
    );
    if (!row) throw notFound(kind === 'provider' ? 'Provider' : 'Target');
    return row;
  };

  app.get(
    '/api/admin/outbound-allow',
    {
      ...opts,
      schema: {
        tags,
        summary: "Every user's providers and targets with their outbound allow lists (administrators)",
        querystring: ListQuery,
        response: {
          ...ok(
            "One page of every user's providers and targets with their allow lists, and `next_offset`.",
            OutboundAllowList,
          ),
        },
      },
    },
    async (req) => {
      const q = req.query;
      const limit = q.limit ?? 200;
      const offset = q.offset ?? 0;
      const managed = managedKinds();
      const notManaged = managed.length ? ` WHERE p.kind NOT IN (${managed.map(() => '?').join(', ')})` : '';
      // One page over both tables, by owner, then providers before targets, then name.
      const rows = await core.db.all<Row>(
        `SELECT * FROM (
        SELECT 'provider' AS record, p.id, p.user_id, p.kind, p.name, p.enabled, p.config, p.outbound_allow, u.email AS
        owner_email
          FROM providers p JOIN users u ON u.id = p.user_id${notManaged}
        UNION ALL
        SELECT 'target' AS record, t.id, t.user_id, t.kind, t.name, t.enabled, t.config, t.outbound_allow, u.email AS
        owner_email
          FROM targets t JOIN users u ON u.id = t.user_id
      ) x ORDER BY owner_email, record, name, id LIMIT ? OFFSET ?`,
        [...managed, limit + 1, offset] as never[],
      );
      const more = rows.length > limit;
      return {
        items: rows.slice(0, limit).map((r) => view(core, r.record, r)),
        next_offset: more ? offset + limit : null,
      };
    },
  );

  app.put(
    '/api/admin/outbound-allow/:kind/:id',
    {
      ...opts,
      schema: {
        tags,
        summary: "Set the outbound allow list of any user's provider or target (administrators)",
        params: Params,
        body: PutBody,
        response: { ...ok('The provider or target with its new allow list.', OutboundAllowItem) },
      },
    },
    async (req) => {
      const admin = caller(req);
      const { kind, id } = req.params;
      const row = await one(kind, id);
      const allow =
        outboundAllowInput(admin, req.body.outbound_allow, row.outbound_allow, core.logs.get('relay')) ?? null;
      const now = nowIso(core);
      if (kind === 'provider') {
        const enabled = Db.bool(row.enabled);
        // As an owner's PATCH: status back to pending and the instance restarted with the new list.
        await core.db.run(
          'UPDATE providers SET outbound_allow = ?, status = ?, status_detail = NULL, updated_at = ? WHERE id = ?',
          [allow, enabled ? 'pending' : 'disabled', now, row.id],
        );
        await restartProvider(core, await one(kind, id));
      } else {
        // updated_at is part of the cached instance's key, so the next send builds a fresh instance.
        await core.db.run('UPDATE targets SET outbound_allow = ?, updated_at = ? WHERE id = ?', [allow, now, row.id]);
        await core.plugins.dropTarget(row.id);
      }
      core.logs.get('relay').info(
        {
          admin_id: admin.id,
          record: kind,
          [`${kind}_id`]: row.id,
          owner_id: row.user_id,
          outbound_allow: allow ?? [],
        },
        'an administrator set the outbound allow list',
      );
      return view(core, kind, await one(kind, id));
    },
  );
}
