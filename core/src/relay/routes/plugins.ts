/**
 * `GET /api/plugins`: the provider and target kinds this service has enabled, described for clients
 * in the caller's language (`?locale=`, else the user's language, else `Accept-Language`, else
 * English), from each plugin's locale files with English as the per-string fallback.
 */
import Type, { type Static } from 'typebox';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { Locale, ok } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import { localizeManifest, pickLocale } from '../../plugins/locales.ts';
import { type PluginEventView, PluginList } from '../definitions/plugin.ts';

export async function pluginRoutes(app: App, core: Core): Promise<void> {
  app.get(
    '/api/plugins',
    {
      schema: {
        tags: ['relay'],
        summary: "The enabled provider and target kinds, in the caller's language",
        querystring: Type.Object({ locale: Type.Optional(Locale) }),
        response: {
          ...ok(
            'The enabled kinds (`plugins`) with their config schemas, events and limits, and the `locale` ' +
              'they are described in.',
            PluginList,
          ),
        },
      },
      preHandler: requireUser(core),
    },
    async (req) => {
      const locale = pickLocale({
        query: req.query.locale,
        user: caller(req).locale,
        acceptLanguage: req.headers['accept-language'],
      });
      const plugins = [...core.plugins.plugins.values()].map((p) => {
        const m = p.def.manifest;
        const words = localizeManifest(m, locale);
        const events: Record<string, Static<typeof PluginEventView>> = {};
        for (const [type, spec] of Object.entries(m.events ?? {})) {
          events[type] = {
            severity: spec.severity,
            quiet_hours: spec.quietHours,
            description: words.events[type] ?? null,
            payload_schema: spec.payload,
          };
        }
        return {
          id: p.id,
          kind: p.kind,
          display_name: words.display_name,
          description: words.description,
          config_schema: words.config_schema,
          tracker_schema: words.tracker_schema,
          secret_paths: p.secretPaths,
          events,
          ingest: m.ingest ?? null,
          limits: m.limits ?? null,
          core_managed: m.coreManaged === true,
          has_bot_driver: p.kind === 'target' && Boolean((p.def as { botDriver?: unknown }).botDriver),
        };
      });
      return { locale, plugins };
    },
  );
}
