/** Instance configuration of the MQTT target, and the checks a schema cannot express. */

import type { ConfigProblem, Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';
import { topicTemplateProblems } from './topic.ts';

export const ConfigSchema = Type.Object({
  url: Type.String({
    pattern: '^mqtts?://[^\\s/?#@]+/?$',
    maxLength: 1024,
    description: 'Broker address, e.g. `mqtt://192.168.1.10:1883` or `mqtts://broker.example.net:8883`.',
  }),
  username: Type.Optional(
    Type.String({ minLength: 1, maxLength: 512, description: 'User name on the broker; empty for anonymous access.' }),
  ),
  password: Type.Optional(Secret({ minLength: 1, maxLength: 1024, description: 'Password of that user.' })),
  topic: Type.String({
    minLength: 1,
    maxLength: 1024,
    default: 'herald/{{event_type}}',
    description:
      'Topic to publish to, e.g. `herald/{{event_type}}`; may use `{{event_type}}`, `{{severity}}` and ' +
      '`{{provider_kind}}`, no `+` or `#`.',
  }),
  qos: Type.Union([Type.Literal(0), Type.Literal(1)], {
    default: 1,
    description:
      'QoS 1 (default): a send is done when the broker acknowledged the message. QoS 0: done once written to the ' +
      'connection.',
  }),
  retain: Type.Boolean({
    default: false,
    description: 'Ask the broker to keep the last message of each topic for clients that subscribe later.',
  }),
});

export type MqttTargetConfig = Static<typeof ConfigSchema>;

/** Timings of the connection; tests shorten them through `createMqttTarget`. */
export interface Timings {
  /** Limit for the TCP (and TLS) connection plus the broker's CONNACK. */
  connectTimeoutMs: number;
  /** Limit for the broker's PUBACK (QoS 1) or the write (QoS 0). */
  publishTimeoutMs: number;
  /** MQTT keep-alive of the connection kept open between sends. */
  keepaliveSeconds: number;
  /** How long `stop()` waits for a clean DISCONNECT. */
  closeTimeoutMs: number;
}

export const DEFAULT_TIMINGS: Timings = {
  connectTimeoutMs: 10_000,
  publishTimeoutMs: 10_000,
  keepaliveSeconds: 60,
  closeTimeoutMs: 1_000,
};

/** The broker's address parts; throws on a URL the schema let through but `URL` cannot read. */
export function brokerAddress(url: string): { tls: boolean; host: string; port: number; display: string } {
  const u = new URL(url);
  const tls = u.protocol === 'mqtts:';
  const port = u.port ? Number(u.port) : tls ? 8883 : 1883;
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  return { tls, host, port, display: `${u.hostname}:${port}` };
}

/** Problems of a config beyond its schema: the broker address, the topic template, the credential pair. */
export function configProblems(cfg: MqttTargetConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  try {
    if (!brokerAddress(cfg.url).host) throw new Error('no host');
  } catch {
    problems.push({
      path: '/url',
      message: 'is not a broker address such as mqtt://host:1883',
      code: 'invalid_broker_url',
    });
  }
  problems.push(...topicTemplateProblems(cfg.topic).map((p) => ({ path: '/topic', ...p })));
  if (cfg.password !== undefined && cfg.username === undefined) {
    problems.push({
      path: '/username',
      message: 'is required when a password is set',
      code: 'required',
      detail: 'MQTT sends a password only together with a user name: set username too, or remove the password.',
    });
  }
  return problems;
}
