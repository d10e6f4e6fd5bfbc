/** Instance configuration of the Home Assistant provider. */

import type { Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

/** Which `state_changed` events become notifications. */
export const EntityFiltersSchema = Type.Object({
  include_domains: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      maxItems: 200,
      description:
        'Entity domains to follow, e.g. `light`, `binary_sensor`. With no include list every entity is followed.',
    }),
  ),
  include_entities: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
      maxItems: 500,
      description: 'Entity ids or globs (`*`, `?`) to follow, e.g. `sensor.*_temperature`.',
    }),
  ),
  exclude_entities: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
      maxItems: 500,
      description: 'Entity ids or globs never notified; wins over the include lists.',
    }),
  ),
  min_interval_seconds: Type.Integer({
    minimum: 0,
    maximum: 86_400,
    default: 30,
    description:
      'Per-entity debounce: at most one notification per entity in this window; the latest state is sent when it ' +
      'ends. 0 disables.',
  }),
});

export const ConfigSchema = Type.Object({
  base_url: Type.String({
    pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$',
    maxLength: 2048,
    description: 'Home Assistant address, e.g. `http://homeassistant.local:8123`.',
  }),
  access_token: Secret({
    minLength: 1,
    maxLength: 4096,
    description: 'A long-lived access token (profile → Security in Home Assistant).',
  }),
  entity_filters: Type.Optional(EntityFiltersSchema),
  event_types: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\s*]+$' }), {
      maxItems: 50,
      description: 'Extra Home Assistant event types to relay as `event_fired`.',
    }),
  ),
});

export type HaConfig = Static<typeof ConfigSchema>;
export type EntityFilters = Static<typeof EntityFiltersSchema>;

/** Timings of the connection supervisor; tests shorten them through `createHomeAssistantProvider`. */
export interface Timings {
  /** First reconnect delay; doubles per failed attempt. */
  reconnectMinMs: number;
  /** Cap of the reconnect delay. */
  reconnectMaxMs: number;
  /** Heartbeat period. */
  pingIntervalMs: number;
  /** A heartbeat without a pong within this time marks the connection dead. */
  pongTimeoutMs: number;
  /** Limit for the WebSocket handshake and the auth phase. */
  handshakeTimeoutMs: number;
  /** How long `stop()` waits for a clean close before cutting the socket. */
  closeTimeoutMs: number;
}

export const DEFAULT_TIMINGS: Timings = {
  reconnectMinMs: 1_000,
  reconnectMaxMs: 60_000,
  pingIntervalMs: 30_000,
  pongTimeoutMs: 10_000,
  handshakeTimeoutMs: 10_000,
  closeTimeoutMs: 1_000,
};

/** `http(s)://host:port/prefix` → `ws(s)://host:port/prefix/api/websocket`. */
export function websocketUrl(baseUrl: string): URL {
  const url = new URL(baseUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/api/websocket`;
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  return url;
}
