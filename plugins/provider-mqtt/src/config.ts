/** Instance configuration of the MQTT provider, and the checks a schema cannot express. */
import { createHash } from 'node:crypto';
import type { ConfigProblem, Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';
import { topicFilterProblem } from './topics.ts';

export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const SeveritySchema = Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('critical')]);

/** How a JSON message becomes a notification: the generic webhook's path expressions. */
export const MappingSchema = Type.Object(
  {
    title: Type.String({
      maxLength: 500,
      default: 'title',
      description:
        'Path expression (e.g. `title || name`) or a `{{path}} text` template for the title; the topic when it ' +
        'finds nothing.',
    }),
    body: Type.String({
      maxLength: 2000,
      default: 'body || message',
      description:
        'Path expression or `{{path}} text` template for the body; the message itself when it finds nothing.',
    }),
    severity: Type.String({
      maxLength: 500,
      default: 'severity',
      description: 'Path expression of the raw severity value.',
    }),
    severity_map: Type.Optional(
      Type.Record(Type.String(), SeveritySchema, { description: 'Raw severity value → info, warning or critical.' }),
    ),
    event_key: Type.Optional(
      Type.String({
        maxLength: 500,
        description:
          'Path expression of a stable identifier (e.g. `$topic` or `device.id`): messages with the same key ' +
          'update one notification.',
      }),
    ),
  },
  { default: {} },
);

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
  client_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      pattern: '^[A-Za-z0-9._:-]+$',
      description:
        'MQTT client id, e.g. `herald-home`. Default: one derived from this provider, stable across restarts so ' +
        'the broker keeps its session.',
    }),
  ),
  topics: Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), {
    minItems: 1,
    maxItems: 50,
    description:
      'Topic filters to subscribe to, e.g. `home/alerts`, `zigbee2mqtt/+/action`, `frigate/events/#` (`+` one ' +
      'level, `#` the rest, last only).',
  }),
  qos: Type.Union([Type.Literal(0), Type.Literal(1)], {
    default: 1,
    description:
      'QoS 1 (default): the broker keeps a message until Herald has recorded it. QoS 0: at most once, nothing is kept.',
  }),
  clean_session: Type.Boolean({
    default: false,
    description:
      'Off (default): the broker keeps the session and queues QoS 1 messages while Herald is away. On: start ' +
      'afresh at every connect.',
  }),
  include_retained: Type.Boolean({
    default: false,
    description: 'Also notify about retained messages the broker replays on subscribing (old states); off by default.',
  }),
  mapping: MappingSchema,
});

export type MqttConfig = Static<typeof ConfigSchema>;
export type MappingConfig = Static<typeof MappingSchema>;

/** Timings of the connection; tests shorten them through `createMqttProvider`. */
export interface Timings {
  /** First reconnect delay; doubles per failed attempt. */
  reconnectMinMs: number;
  /** Cap of the reconnect delay. */
  reconnectMaxMs: number;
  /** Limit for the TCP (and TLS) connection plus the broker's CONNACK and SUBACK. */
  connectTimeoutMs: number;
  /** MQTT keep-alive: the broker and the client each notice a dead connection after 1.5 times this. */
  keepaliveSeconds: number;
  /** How long `stop()` waits for a message being recorded and a clean DISCONNECT. */
  closeTimeoutMs: number;
}

export const DEFAULT_TIMINGS: Timings = {
  reconnectMinMs: 1_000,
  reconnectMaxMs: 60_000,
  connectTimeoutMs: 10_000,
  keepaliveSeconds: 30,
  closeTimeoutMs: 2_000,
};

/** The broker's address parts; throws on a URL the schema let through but `URL` cannot read. */
export function brokerAddress(url: string): { tls: boolean; host: string; port: number; display: string } {
  const u = new URL(url);
  const tls = u.protocol === 'mqtts:';
  const port = u.port ? Number(u.port) : tls ? 8883 : 1883;
  // `URL` keeps the brackets of an IPv6 literal; sockets and DNS want the bare address.
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  return { tls, host, port, display: `${u.hostname}:${port}` };
}

/**
 * The client id used when none is configured: stable for one provider record (so a persistent
 * session survives restarts) and 23 characters, the length every broker must accept.
 */
export function defaultClientId(instanceId: string): string {
  return `herald-${createHash('sha256').update(instanceId).digest('hex').slice(0, 16)}`;
}

/** Problems of a config beyond its schema: the broker address, each topic filter, the credential pair. */
export function configProblems(cfg: MqttConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  try {
    const { host } = brokerAddress(cfg.url);
    if (!host) throw new Error('no host');
  } catch {
    problems.push({
      path: '/url',
      message: 'is not a broker address such as mqtt://host:1883',
      code: 'invalid_broker_url',
    });
  }
  cfg.topics.forEach((filter, i) => {
    const problem = topicFilterProblem(filter);
    if (problem) {
      problems.push({
        path: `/topics/${i}`,
        message: `${problem}`,
        code: 'invalid_topic_filter',
        detail: `The topic filter "${filter.slice(0, 200)}" ${problem}.`,
      });
    }
  });
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
