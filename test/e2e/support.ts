/**
 * Shared steps of the cross-package end-to-end tests: everything goes through the HTTP API of a
 * real in-process service (providers, trackers, targets, links), and the relay is driven with
 * `tick()` so no test waits for the dispatcher's own timer.
 */
import type { TestService } from '../helpers/service.ts';

/** Polls `probe` until it returns a truthy value; throws after `ms` (15 s) naming `what` (test/helpers/wait.ts). */
export { waitFor as until } from '../helpers/wait.ts';

/** Plugins every e2e service needs besides the ones under test (SERVICE_PLUGINS replaces the default). */
export const BASE_PLUGINS = '@herald/provider-bridge-self,herald-target-recorder';

/** The service's `SERVICE_PLUGINS` value with `extra` packages enabled. */
export const plugins = (...extra: string[]): string => [BASE_PLUGINS, ...extra].join(',');

interface RelayHandle {
  tick(): Promise<void>;
}

/** The relay pipeline of a running service. */
export function relayOf(s: TestService): RelayHandle {
  return s.service.core.services.get('relay') as RelayHandle;
}

/** `POST` that must answer 201; returns the created resource. */
export async function create(s: TestService, path: string, body: Record<string, unknown>): Promise<any> {
  const r = await s.request('POST', path, { token: s.admin.token, body });
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.text}`);
  return r.body;
}

/** Links a tracker to a target. */
export async function link(s: TestService, trackerId: string, targetId: string): Promise<void> {
  const r = await s.request('PUT', `/api/trackers/${trackerId}/targets/${targetId}`, { token: s.admin.token });
  if (r.status >= 300) throw new Error(`link: ${r.status} ${r.text}`);
}

/** A recorder target (POSTs each OutboundMessage as JSON to `url`). */
export function recorder(s: TestService, url: string, name = 'Rec', locale = 'en'): Promise<any> {
  return create(s, '/api/targets', { kind: 'recorder', name, config: { url }, locale });
}

/**
 * Provider → tracker → target chain. The provider is created disabled and enabled once the
 * tracker is linked, so a stream or poll instance starts with somewhere to send its events.
 */
export async function chain(
  s: TestService,
  o: {
    provider: Record<string, unknown>;
    target: { id: string };
    tracker?: Record<string, unknown>;
    enableAfterLink?: boolean;
  },
): Promise<{ provider: any; tracker: any; hook: string }> {
  const provider = await create(s, '/api/providers', {
    ...o.provider,
    ...(o.enableAfterLink ? { enabled: false } : {}),
  });
  const tracker = await create(s, '/api/trackers', {
    provider_id: provider.id,
    name: `${provider.name} tracker`,
    ...(o.tracker ?? {}),
  });
  await link(s, tracker.id, o.target.id);
  let current = provider;
  if (o.enableAfterLink) {
    const r = await s.request('PATCH', `/api/providers/${provider.id}`, {
      token: s.admin.token,
      body: { enabled: true },
    });
    if (r.status !== 200) throw new Error(`enable provider: ${r.status} ${r.text}`);
    current = r.body;
  }
  return { provider: current, tracker, hook: provider.webhook_url ? new URL(provider.webhook_url).pathname : '' };
}

/** An event as the API shows it. */
export async function event(s: TestService, id: string): Promise<any> {
  const r = await s.request('GET', `/api/events/${id}`, { token: s.admin.token });
  if (r.status !== 200) throw new Error(`event ${id}: ${r.status} ${r.text}`);
  return r.body;
}

/** The deliveries of an event, straight from the queue table. */
export function deliveries(s: TestService, eventId: string): Promise<any[]> {
  return s.service.core.db.all('SELECT * FROM deliveries WHERE event_id = ? ORDER BY id', [eventId]);
}

/** event_log rows of a provider, oldest first. */
export async function eventRows(
  s: TestService,
  providerId: string,
): Promise<{ id: string; event_type: string; dispatch_status: string; payload: any }[]> {
  const rows = await s.service.core.db.all(
    'SELECT id, event_type, dispatch_status, payload FROM event_log WHERE provider_id = ? ORDER BY id',
    [providerId],
  );
  return rows.map((r) => ({ ...r, payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload })) as any;
}

/** Payload-log rows of a provider through the API, newest first. */
export async function payloadLog(s: TestService, providerId: string): Promise<any[]> {
  const r = await s.request('GET', `/api/providers/${providerId}/webhook-log?limit=200`, { token: s.admin.token });
  if (r.status !== 200) throw new Error(`webhook-log: ${r.status} ${r.text}`);
  return r.body.entries;
}

/** The value of one Prometheus sample, 0 when absent. `labels` is the exact `{…}` text. */
export async function metric(s: TestService, name: string, labels: string): Promise<number> {
  const text = (await s.request('GET', '/api/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** The bridge_self tracker of the admin, linked to a recorder at `url`. */
export async function selfTarget(s: TestService, url: string): Promise<any> {
  const providers = await s.request('GET', '/api/providers', { token: s.admin.token });
  const self = providers.body.providers.find((p: any) => p.kind === 'bridge_self');
  const trackers = await s.request('GET', `/api/trackers?provider_id=${self.id}`, { token: s.admin.token });
  const target = await recorder(s, url, 'Ops');
  await link(s, trackers.body.trackers[0].id, target.id);
  return target;
}
