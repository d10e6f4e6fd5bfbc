/**
 * Uptime Kuma's webhook notification (`{ heartbeat, monitor, msg }`) turned into an event: a
 * monitor's new state (`monitor_down`, `monitor_up`, `monitor_pending`, `monitor_maintenance`,
 * correlated by monitor so that "up" edits the "down" message), the notification's test
 * (`monitor_test`), or a message about no heartbeat such as a certificate or domain expiry
 * (`monitor_notice`).
 */

import type { EmittedEvent } from '@herald/plugin-api';
import { WebhookRejectedError } from '@herald/plugin-api';

/** Heartbeat `status` values, as Uptime Kuma numbers them. */
export const STATUS = { 0: 'down', 1: 'up', 2: 'pending', 3: 'maintenance' } as const;
export type MonitorStatus = (typeof STATUS)[keyof typeof STATUS];

/** Monitor types whose `url` is what they check; the others check `hostname` (and `port`). */
const URL_TYPES = new Set(['http', 'keyword', 'json-query', 'real-browser', 'grpc-keyword']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const reject = (what: string): never => {
  throw new WebhookRejectedError(422, `not an Uptime Kuma webhook notification: ${what}`);
};

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** An http(s) URL without any user name or password in it, else undefined. */
export function publicUrl(v: unknown): string | undefined {
  const s = str(v);
  if (!s || !/^https?:\/\/[^/\s]/i.test(s)) return undefined;
  try {
    const u = new URL(s);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return undefined;
  }
}

/** Uptime Kuma's heartbeat time (`2026-01-02 03:04:05.678`, UTC) as a Date. */
export function kumaTime(v: unknown): Date | undefined {
  const s = str(v);
  if (!s) return undefined;
  const iso = s.includes('T') ? s : `${s.replace(' ', 'T')}${/(Z|[+-]\d\d:?\d\d)$/.test(s) ? '' : 'Z'}`;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** The event one notification stands for. */
export function toEvent(body: unknown): EmittedEvent {
  if (!isObject(body)) return reject('the body must be a JSON object with heartbeat, monitor and msg');
  const text = typeof body.msg === 'string' ? body.msg : '';
  const { heartbeat, monitor } = body;
  if ((heartbeat === null || heartbeat === undefined) && (monitor === null || monitor === undefined)) {
    if (!text.trim()) return reject('msg must be a text when heartbeat and monitor are null');
    // The "Test" button sends `<notification name> Testing`; certificate and domain expiry send their own text.
    return /\sTesting$/.test(text.trim())
      ? { type: 'monitor_test', payload: { text } }
      : { type: 'monitor_notice', payload: { text } };
  }
  if (!isObject(heartbeat)) return reject('heartbeat must be an object');
  if (!isObject(monitor)) return reject('monitor must be an object');
  const code = heartbeat.status;
  if (typeof code !== 'number' || !(code in STATUS))
    return reject('heartbeat.status must be 0 (down), 1 (up), 2 (pending) or 3 (maintenance)');
  const status = STATUS[code as keyof typeof STATUS];
  const id = num(monitor.id);
  const name = str(monitor.name);
  if (id === undefined && !name) return reject('monitor needs an id or a name');

  const type = str(monitor.type) ?? '';
  const url = publicUrl(monitor.url);
  const hostname = str(monitor.hostname);
  const port = num(monitor.port);
  const target = URL_TYPES.has(type) ? url : hostname && (port !== undefined ? `${hostname}:${port}` : hostname);
  const time = kumaTime(heartbeat.time);
  const local = str(heartbeat.localDateTime);

  const payload: Record<string, unknown> = {
    status,
    monitor_name: name ?? `#${id}`,
    monitor_key: id !== undefined ? String(id) : `name:${name}`,
    monitor_type: type,
    target: target ?? '',
    message: typeof heartbeat.msg === 'string' ? heartbeat.msg : '',
    text,
    time: str(heartbeat.time) ?? '',
    local_time: local ?? (time ? time.toISOString().slice(0, 19).replace('T', ' ') : ''),
    timezone: local ? (str(heartbeat.timezone) ?? '') : time ? 'UTC' : '',
  };
  if (id !== undefined) payload.monitor_id = id;
  if (URL_TYPES.has(type) && url) payload.url = url;
  if (hostname) payload.hostname = hostname;
  if (port !== undefined) payload.port = port;
  const pathName = str(monitor.pathName);
  if (pathName && pathName !== name) payload.path_name = pathName;
  const description = str(monitor.description);
  if (description) payload.description = description;
  const ping = num(heartbeat.ping);
  if (ping !== undefined) payload.ping_ms = Math.round(ping);
  const retries = num(heartbeat.retries);
  if (retries !== undefined && Number.isInteger(retries) && retries >= 0) payload.retries = retries;
  if (status === 'up') {
    const downSince = kumaTime(heartbeat.lastDownTime);
    if (downSince && time && time >= downSince) {
      const seconds = Math.round((time.getTime() - downSince.getTime()) / 1000);
      payload.downtime_seconds = seconds;
      payload.downtime_minutes = Math.ceil(seconds / 60);
    }
  }
  return { type: `monitor_${status}`, payload };
}
