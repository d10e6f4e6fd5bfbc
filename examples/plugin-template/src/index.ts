/**
 * herald-provider-example: polls a JSON status endpoint and notifies when a component's status
 * changes. Copy this package, rename it (see README.md) and replace the parts marked RENAME.
 *
 * The endpoint answers `GET <url>` with
 * `{ "components": [{ "id": "db", "name": "Database", "status": "operational" }, …] }`.
 */
import {
  AuthFailedError, ConfigError, NotReadyError, OUTBOUND_REFUSED, Secret, Type, defineProvider, errorCode, type Static,
} from '@herald/plugin-api';
import en from '../locales/en.json' with { type: 'json' };
import ru from '../locales/ru.json' with { type: 'json' };

/** Instance configuration: one record per monitored endpoint, entered on the provider form. */
const Config = Type.Object({
  url: Type.String({ pattern: '^https?://' }),
  // Secret(): masked in API answers, kept out of backups by default.
  api_key: Type.Optional(Secret({ minLength: 1 })),
  poll_interval_seconds: Type.Integer({ minimum: 30, maximum: 86_400, default: 120 }),
}, { additionalProperties: false });

/** Tracker options: what one subscription follows. */
const Tracker = Type.Object({
  component_ids: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
}, { additionalProperties: false });

const Status = Type.Union([Type.Literal('operational'), Type.Literal('degraded'), Type.Literal('outage'), Type.Literal('maintenance')]);

/** Payload of the one event type; every emitted payload is validated against it. */
const StatusChanged = Type.Object({
  component_id: Type.String(),
  component_name: Type.String(),
  previous_status: Status,
  status: Status,
  url: Type.Optional(Type.String()),
});
export type StatusChangedPayload = Static<typeof StatusChanged>;

interface Component { id: string; name: string; status: Static<typeof Status> }

/** RENAME: the event type. Event types share one namespace across plugins: prefix them with your id. */
export const STATUS_CHANGED = 'example_status_changed';

export default defineProvider({
  manifest: {
    id: 'example_status', // RENAME: stable kind id, stored in records; never change it once published
    kind: 'provider',
    apiVersion: 1,
    displayName: 'Example status page',
    description: 'Notifies when a component of a JSON status endpoint changes status.',
    configSchema: Config,
    trackerSchema: Tracker,
    ingest: 'poll',
    pollIntervalSeconds: 120,
    events: {
      [STATUS_CHANGED]: {
        payload: StatusChanged,
        quietHours: 'defer',
        severity: 'warning',
        description: 'A component changed status',
      },
    },
    templates: {
      en: { [STATUS_CHANGED]: { title: '{{component_name}}: {{status}}', body: '{{component_name}} went from {{previous_status}} to {{status}}.{{#if url}} {{url}}{{/if}}' } },
      ru: { [STATUS_CHANGED]: { title: '{{component_name}}: {{status}}', body: '{{component_name}}: было {{previous_status}}, стало {{status}}.{{#if url}} {{url}}{{/if}}' } },
    },
    locales: { en, ru },
  },

  create(ctx) {
    /** One GET of the endpoint, with the remote's answers mapped to the contract's errors. */
    async function fetchComponents(signal: AbortSignal): Promise<Component[]> {
      let res;
      try {
        res = await ctx.http.request(ctx.config.url, {
          signal,
          timeoutMs: 10_000,
          headers: ctx.config.api_key ? { authorization: `Bearer ${ctx.config.api_key}` } : {},
        });
      } catch (err) {
        // The operator's outbound policy refused the address: retrying will not help.
        if (errorCode(err) === OUTBOUND_REFUSED) throw new ConfigError((err as Error).message, { cause: err });
        throw new NotReadyError(`cannot reach the status endpoint: ${(err as Error).message}`, { cause: err });
      }
      if (res.status === 401 || res.status === 403) throw new AuthFailedError(`the status endpoint refused the API key (${res.status})`, { statusCode: res.status });
      // 429, 5xx…: a failed poll; the core retries with backoff and counts the failure.
      if (res.status !== 200) throw new NotReadyError(`the status endpoint answered ${res.status}`);
      const body = res.json<{ components?: Component[] }>();
      if (!Array.isArray(body.components)) throw new Error('the status endpoint answered JSON without a "components" list');
      return body.components;
    }

    return {
      // Called once before the first poll: fail early on a bad URL or key.
      async start() {
        await fetchComponents(ctx.signal);
      },

      async poll({ trackers, signal }) {
        const components = await fetchComponents(signal);
        for (const c of components) {
          const key = `status:${c.id}`;
          const previous = await ctx.store.get<Component['status']>(key);
          await ctx.store.set(key, c.status);
          // The first sighting only records a baseline.
          if (previous === undefined || previous === c.status) continue;
          // Only the trackers that follow this component (an empty list follows all).
          const following = trackers.filter((t) => {
            const ids = (t.config as Static<typeof Tracker>).component_ids ?? [];
            return ids.length === 0 || ids.includes(c.id);
          });
          if (!following.length) continue;
          await ctx.emit({
            type: STATUS_CHANGED,
            payload: { component_id: c.id, component_name: c.name, previous_status: previous, status: c.status, url: ctx.config.url },
            trackerIds: following.map((t) => t.id),
            severity: c.status === 'outage' ? 'critical' : c.status === 'operational' ? 'info' : 'warning',
          });
        }
      },
    };
  },
});
