/** Event types of the Uptime Kuma provider: payload schemas, severities, quiet hours, correlation. */

import type { EventSpec } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';

const Opt = Type.Optional;
const Text = Type.String();

/** A monitor's new state, from one heartbeat. */
export const MonitorPayload = Type.Object({
  status: Type.Union([Type.Literal('down'), Type.Literal('up'), Type.Literal('pending'), Type.Literal('maintenance')]),
  monitor_id: Opt(Type.Number()),
  monitor_name: Text,
  /** The monitor's id, or `name:<name>` when the notification has none: the message to follow. */
  monitor_key: Text,
  /** Uptime Kuma's monitor type: http, keyword, port, ping, dns, docker, push… */
  monitor_type: Text,
  /** What is checked: the URL of an HTTP monitor, else `host:port` or the host ('' for push monitors). */
  target: Text,
  /** The heartbeat's message: `200 - OK`, `timeout of 48000ms exceeded`… */
  message: Text,
  /** Uptime Kuma's own one-line text: `[name] [🔴 Down] message`. */
  text: Text,
  /** The heartbeat time as sent (UTC). */
  time: Text,
  /** The heartbeat time in Uptime Kuma's time zone (UTC when it does not say). */
  local_time: Text,
  timezone: Text,
  /** The monitored URL (HTTP monitors), without credentials. */
  url: Opt(Text),
  hostname: Opt(Text),
  port: Opt(Type.Number()),
  /** The monitor's place among groups: `Group / Monitor`. */
  path_name: Opt(Text),
  description: Opt(Text),
  ping_ms: Opt(Type.Number()),
  retries: Opt(Type.Integer({ minimum: 0 })),
  /** On `up`: how long the monitor was down. */
  downtime_seconds: Opt(Type.Integer({ minimum: 0 })),
  downtime_minutes: Opt(Type.Integer({ minimum: 0 })),
});

/** A notification about no monitor state: the test, a certificate or domain about to expire. */
export const TextPayload = Type.Object({ text: Text });

/** One message per monitor, which its later states edit. */
const MONITOR = { key: ['monitor_key'], thread: 'monitor' };

const SAMPLE = {
  monitor_id: 7,
  monitor_name: 'Website',
  monitor_key: '7',
  monitor_type: 'http',
  target: 'https://www.example.net/',
  url: 'https://www.example.net/',
  timezone: 'Europe/Berlin',
};

export const EVENTS: Record<string, EventSpec> = {
  monitor_down: {
    payload: MonitorPayload,
    quietHours: 'send',
    severity: 'critical',
    correlation: MONITOR,
    description: 'A monitor went down.',
    example: {
      ...SAMPLE,
      status: 'down',
      message: 'timeout of 48000ms exceeded',
      text: '[Website] [🔴 Down] timeout of 48000ms exceeded',
      time: '2026-01-02 09:04:05.678',
      local_time: '2026-01-02 10:04:05',
      retries: 0,
    },
  },
  monitor_up: {
    payload: MonitorPayload,
    quietHours: 'send',
    severity: 'info',
    correlation: MONITOR,
    description: 'A monitor is up again (or up at its first check).',
    example: {
      ...SAMPLE,
      status: 'up',
      message: '200 - OK',
      text: '[Website] [✅ Up] 200 - OK',
      time: '2026-01-02 09:16:05.678',
      local_time: '2026-01-02 10:16:05',
      ping_ms: 182,
      retries: 0,
      downtime_seconds: 720,
      downtime_minutes: 12,
    },
  },
  monitor_pending: {
    payload: MonitorPayload,
    quietHours: 'defer',
    severity: 'warning',
    correlation: MONITOR,
    description: 'A monitor failed a check and Uptime Kuma is retrying before calling it down (first check only).',
    example: {
      ...SAMPLE,
      status: 'pending',
      message: 'Request failed with status code 502',
      text: '[Website] [🔴 Down] Request failed with status code 502',
      time: '2026-01-02 09:03:05.678',
      local_time: '2026-01-02 10:03:05',
      retries: 1,
    },
  },
  monitor_maintenance: {
    payload: MonitorPayload,
    quietHours: 'defer',
    severity: 'info',
    correlation: MONITOR,
    description: 'A monitor is under maintenance (first check only).',
    example: {
      ...SAMPLE,
      status: 'maintenance',
      message: 'Monitor under maintenance',
      text: '[Website] [🔴 Down] Monitor under maintenance',
      time: '2026-01-02 09:00:00.000',
      local_time: '2026-01-02 10:00:00',
    },
  },
  monitor_test: {
    payload: TextPayload,
    quietHours: 'send',
    severity: 'info',
    description: "The test sent from the notification's settings in Uptime Kuma.",
    example: { text: 'Herald Testing' },
  },
  monitor_notice: {
    payload: TextPayload,
    quietHours: 'defer',
    severity: 'warning',
    description: 'A notification about no monitor state, such as a certificate or domain about to expire.',
    example: { text: '[Website][https://www.example.net/] Server certificate www.example.net will expire in 14 days' },
  },
};
