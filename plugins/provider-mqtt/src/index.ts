/**
 * MQTT provider: subscribes to topic filters on a broker with MQTT.js and turns each message into
 * an `mqtt_message` event (JSON read through a mapping, anything else as text). QoS 1 messages are
 * acknowledged to the broker only once recorded, on a persistent session, so nothing the broker
 * accepted is lost while Herald restarts or the connection drops.
 */

import type { ConfigProblem, ProviderDefinition } from '@herald/plugin-api';
import { ConfigError, defineProvider } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import type { MqttConfig, Timings } from './config.ts';
import { ConfigSchema, configProblems, DEFAULT_TIMINGS, defaultClientId } from './config.ts';
import { EVENTS } from './events.ts';
import type { CompiledMapping } from './mapping.ts';
import { compileMapping } from './mapping.ts';
import { PathExpressionError } from './path-expr.ts';
import { Supervisor } from './supervisor.ts';
import { TEMPLATES } from './templates.ts';

export type { MqttConfig, Timings } from './config.ts';
export { defaultClientId } from './config.ts';
export { compileMapping, mapMessage } from './mapping.ts';
export { topicFilterProblem } from './topics.ts';

/** The mapping's problems as the API answers them (a 422 naming the mapping field). */
function mappingProblems(cfg: MqttConfig): ConfigProblem[] {
  try {
    compileMapping(cfg.mapping);
    return [];
  } catch (err) {
    if (!(err instanceof PathExpressionError)) throw err;
    const field = /mapping\.(\w+)/.exec(err.message)?.[1];
    return [{ path: field ? `/mapping/${field}` : '/mapping', message: err.message, code: 'invalid_path_expression' }];
  }
}

/** Everything create() would refuse, as the API's problems. */
export function checkMqttConfig(cfg: MqttConfig): ConfigProblem[] {
  return [...configProblems(cfg), ...mappingProblems(cfg)];
}

/**
 * Builds the provider definition. The default export uses the production timings; tests pass
 * shorter ones (reconnect backoff, connect timeout) instead of exposing them to operators as config.
 *
 * @example
 * ```ts
 * const fast = createMqttProvider({ reconnectMinMs: 20, reconnectMaxMs: 100 });
 * ```
 */
export function createMqttProvider(timings: Partial<Timings> = {}): ProviderDefinition<typeof ConfigSchema> {
  const t: Timings = { ...DEFAULT_TIMINGS, ...timings };
  return defineProvider({
    manifest: {
      id: 'mqtt',
      kind: 'provider',
      apiVersion: 1,
      displayName: 'MQTT',
      locales: { en: enLocale, ru: ruLocale },
      description: 'Subscribes to topics on an MQTT broker and turns each message into a notification.',
      configSchema: ConfigSchema,
      events: EVENTS,
      ingest: 'stream',
      readinessCheck: 'mqtt',
      templates: TEMPLATES,
    },
    validateConfig: checkMqttConfig,
    create(ctx) {
      const problems = checkMqttConfig(ctx.config);
      if (problems.length) throw new ConfigError(problems.map((p) => `${p.path} ${p.message}`).join('; '));
      const mapping: CompiledMapping = compileMapping(ctx.config.mapping);
      const supervisor = new Supervisor({
        config: ctx.config,
        clientId: ctx.config.client_id ?? defaultClientId(ctx.instanceId),
        mapping,
        timings: t,
        http: ctx.http,
        store: ctx.store,
        clock: ctx.clock,
        log: ctx.log.child({ plugin: 'mqtt' }),
        emit: (event) => ctx.emit(event),
      });
      const onAbort = () => {
        void supervisor.stop();
      };
      return {
        async start() {
          if (ctx.signal.aborted) return;
          ctx.signal.addEventListener('abort', onAbort, { once: true });
          try {
            await supervisor.start();
          } catch (err) {
            // The core makes a new instance to try again; this one must not linger.
            ctx.signal.removeEventListener('abort', onAbort);
            await supervisor.stop();
            throw err;
          }
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

export default createMqttProvider();
