/**
 * Home Assistant provider: keeps a WebSocket to Home Assistant's `/api/websocket` and relays state
 * changes, automation runs, service calls and chosen events, plus its own connection status.
 */

import type { ProviderDefinition } from '@herald/plugin-api';
import { defineProvider } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import type { Timings } from './config.ts';
import { ConfigSchema, DEFAULT_TIMINGS } from './config.ts';
import { EVENTS } from './events.ts';
import { Supervisor } from './supervisor.ts';
import { TEMPLATES } from './templates.ts';

/**
 * Builds the provider definition. The default export uses the production timings; tests pass
 * shorter ones (reconnect backoff, heartbeat) instead of exposing them to operators as config.
 *
 * @example
 * ```ts
 * const fast = createHomeAssistantProvider({ reconnectMinMs: 20, reconnectMaxMs: 100 });
 * ```
 */
export function createHomeAssistantProvider(timings: Partial<Timings> = {}): ProviderDefinition<typeof ConfigSchema> {
  const t: Timings = { ...DEFAULT_TIMINGS, ...timings };
  return defineProvider({
    manifest: {
      id: 'homeassistant',
      kind: 'provider',
      apiVersion: 1,
      displayName: 'Home Assistant',
      locales: { en: enLocale, ru: ruLocale },
      description: 'Relays Home Assistant state changes, automations, service calls and events over its WebSocket API.',
      configSchema: ConfigSchema,
      events: EVENTS,
      ingest: 'stream',
      readinessCheck: 'ha',
      templates: TEMPLATES,
    },
    create(ctx) {
      const supervisor = new Supervisor({
        config: ctx.config,
        timings: t,
        http: ctx.http,
        clock: ctx.clock,
        log: ctx.log.child({ plugin: 'homeassistant' }),
        emit: (event) => ctx.emit(event),
      });
      const onAbort = () => {
        void supervisor.stop();
      };
      return {
        start() {
          if (ctx.signal.aborted) return;
          ctx.signal.addEventListener('abort', onAbort, { once: true });
          supervisor.start();
        },
        async stop() {
          ctx.signal.removeEventListener('abort', onAbort);
          await supervisor.stop();
        },
        health: () => supervisor.health(),
      };
    },
  });
}

export default createHomeAssistantProvider();
