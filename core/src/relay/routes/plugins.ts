/** `GET /api/plugins`: the provider and target kinds this service has enabled, described for clients. */
import type { App } from '../../http/server.ts';
import type { Core } from '../../core.ts';
import { requireUser } from '../../auth/guard.ts';

export async function pluginRoutes(app: App, core: Core): Promise<void> {
  app.get('/api/plugins', { schema: { tags: ['relay'] }, preHandler: requireUser(core) }, async () => {
    const plugins = [...core.plugins.plugins.values()].map((p) => {
      const m = p.def.manifest;
      const events: Record<string, { severity: string; quiet_hours: string; description: string | null; payload_schema: unknown }> = {};
      for (const [type, spec] of Object.entries(m.events ?? {})) {
        events[type] = { severity: spec.severity, quiet_hours: spec.quietHours, description: spec.description ?? null, payload_schema: spec.payload };
      }
      return {
        id: p.id,
        kind: p.kind,
        display_name: m.displayName,
        description: m.description ?? null,
        config_schema: m.configSchema,
        tracker_schema: m.trackerSchema ?? null,
        secret_paths: p.secretPaths,
        events,
        ingest: m.ingest ?? null,
        limits: m.limits ?? null,
        core_managed: m.coreManaged === true,
        has_bot_driver: p.kind === 'target' && Boolean((p.def as { botDriver?: unknown }).botDriver),
      };
    });
    return { plugins };
  });
}
