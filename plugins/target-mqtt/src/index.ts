/**
 * MQTT target: publishes each notification as a JSON document to a topic on a broker, with
 * MQTT.js, over one connection per target kept open between sends.
 */

import type { TargetDefinition } from '@herald/plugin-api';
import { ConfigError, defineTarget } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import type { Timings } from './config.ts';
import { ConfigSchema, configProblems, DEFAULT_TIMINGS } from './config.ts';
import { buildDocument } from './document.ts';
import { Publisher } from './publisher.ts';
import { renderTopic } from './topic.ts';

export type { MqttTargetConfig, Timings } from './config.ts';
export type { MqttDocument } from './document.ts';
export { buildDocument } from './document.ts';
export { renderTopic, topicTemplateProblems } from './topic.ts';

/**
 * Builds the target definition. The default export uses the production timings; tests pass
 * shorter ones.
 */
export function createMqttTarget(timings: Partial<Timings> = {}): TargetDefinition<typeof ConfigSchema> {
  const t: Timings = { ...DEFAULT_TIMINGS, ...timings };
  return defineTarget({
    manifest: {
      id: 'mqtt',
      kind: 'target',
      apiVersion: 1,
      displayName: 'MQTT',
      locales: { en: enLocale, ru: ruLocale },
      description: 'Publishes each notification as a JSON document to a topic on an MQTT broker.',
      configSchema: ConfigSchema,
      limits: { maxMessageLength: 32_000, maxTitleLength: 500, overflow: 'truncate', formats: ['text'] },
    },
    validateConfig: configProblems,
    create(ctx) {
      const problems = configProblems(ctx.config);
      if (problems.length) throw new ConfigError(problems.map((p) => `${p.path} ${p.message}`).join('; '));
      const publisher = new Publisher({
        config: ctx.config,
        http: ctx.http,
        log: ctx.log.child({ plugin: 'mqtt' }),
        timings: t,
      });
      return {
        async send(message, { signal }) {
          const topic = renderTopic(ctx.config.topic, message);
          await publisher.publish({
            topic,
            payload: JSON.stringify(buildDocument(message, ctx.clock.now())),
            locale: message.locale,
            signal,
          });
          return { detail: `published to ${topic}` };
        },
        health: () =>
          publisher.connected
            ? { status: 'ok' }
            : { status: 'degraded', detail: 'not connected (the next send connects)' },
        stop: () => publisher.close(),
      };
    },
  });
}

export default createMqttTarget();
