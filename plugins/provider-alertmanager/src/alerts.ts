/**
 * Alertmanager's webhook notification (payload version 4) read and turned into one event per
 * alert: `alert_firing` or `alert_resolved`, correlated by the alert's fingerprint so that the
 * resolution edits the message of the firing alert.
 */
import { createHash } from 'node:crypto';
import type { EmittedEvent, Severity } from '@herald/plugin-api';
import { WebhookRejectedError } from '@herald/plugin-api';

/** Most alerts reported from one notification; the rest are counted in `omitted_alerts`. */
export const MAX_ALERTS = 100;

export type AlertStatus = 'firing' | 'resolved';

export interface Alert {
  status: AlertStatus;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL: string;
  fingerprint: string;
}

export interface Notification {
  receiver: string;
  status: string;
  alerts: Alert[];
  groupKey: string;
  externalURL: string;
  truncatedAlerts: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const reject = (what: string): never => {
  throw new WebhookRejectedError(422, `not an Alertmanager webhook notification: ${what}`);
};

/** A string map (labels, annotations); absent or null is empty. */
function stringMap(v: unknown, path: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) return reject(`${path} must be an object`);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== 'string') return reject(`${path}.${k} must be a string`);
    out[k] = x;
  }
  return out;
}

const optString = (v: unknown, path: string): string => {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : reject(`${path} must be a string`);
};

/** Checks the parsed body and returns the parts Herald uses; 422 naming the first problem otherwise. */
export function parseNotification(body: unknown): Notification {
  if (!isObject(body)) return reject('the body must be a JSON object');
  if (!Array.isArray(body.alerts)) return reject('alerts must be a list');
  const alerts = body.alerts.map((a: unknown, i: number): Alert => {
    const path = `alerts[${i}]`;
    if (!isObject(a)) return reject(`${path} must be an object`);
    if (a.status !== 'firing' && a.status !== 'resolved')
      return reject(`${path}.status must be "firing" or "resolved"`);
    if (!isObject(a.labels)) return reject(`${path}.labels must be an object`);
    return {
      status: a.status,
      labels: stringMap(a.labels, `${path}.labels`),
      annotations: stringMap(a.annotations, `${path}.annotations`),
      startsAt: optString(a.startsAt, `${path}.startsAt`),
      endsAt: optString(a.endsAt, `${path}.endsAt`),
      generatorURL: optString(a.generatorURL, `${path}.generatorURL`),
      fingerprint: optString(a.fingerprint, `${path}.fingerprint`),
    };
  });
  const truncated = body.truncatedAlerts ?? 0;
  if (typeof truncated !== 'number' || !Number.isInteger(truncated) || truncated < 0)
    return reject('truncatedAlerts must be a whole number');
  return {
    receiver: optString(body.receiver, 'receiver'),
    status: optString(body.status, 'status'),
    alerts,
    groupKey: optString(body.groupKey, 'groupKey'),
    externalURL: optString(body.externalURL, 'externalURL'),
    truncatedAlerts: truncated,
  };
}

/** The event severity of a `severity` label: critical/error/page, warning/warn, anything else info. */
export function severityOf(label: string | undefined): Severity {
  switch ((label ?? '').trim().toLowerCase()) {
    case 'critical':
    case 'error':
    case 'page':
      return 'critical';
    case 'warning':
    case 'warn':
      return 'warning';
    default:
      return 'info';
  }
}

/** `name=value, …` of the labels, sorted by name, without those in `skip`. */
export function labelsText(labels: Record<string, string>, skip: string[] = []): string {
  return Object.keys(labels)
    .filter((k) => !skip.includes(k))
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(', ');
}

/**
 * What identifies the alert across its notifications: Alertmanager's fingerprint, or (for senders
 * that leave it out) a hash of the sorted labels, which is what the fingerprint is computed from.
 */
export function correlationKey(alert: Pick<Alert, 'fingerprint' | 'labels'>): string {
  if (alert.fingerprint.trim()) return alert.fingerprint.trim();
  const sorted = Object.keys(alert.labels)
    .sort()
    .map((k) => [k, alert.labels[k]]);
  return `labels:${createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 32)}`;
}

/** A time as sent, parsed; undefined for Go's zero time (`0001-01-01T00:00:00Z`) or no time. */
function parseTime(s: string): Date | undefined {
  const d = new Date(s);
  return s && !Number.isNaN(d.getTime()) && d.getUTCFullYear() > 1 ? d : undefined;
}

/** `2026-01-02 03:04 UTC`, or the text as sent when it does not parse. */
export function displayTime(s: string): string {
  const d = parseTime(s);
  return d ? `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC` : s;
}

/** Whole minutes from `start` to `end`, when both are real times. */
export function minutesBetween(start: string, end: string): number | undefined {
  const a = parseTime(start);
  const b = parseTime(end);
  return a && b && b >= a ? Math.round((b.getTime() - a.getTime()) / 60_000) : undefined;
}

/** The events of one notification, in the order of its alerts. */
export function toEvents(n: Notification): EmittedEvent[] {
  const shown = n.alerts.slice(0, MAX_ALERTS);
  const omitted = n.alerts.length - shown.length;
  return shown.map((a, i) => {
    const alertname = a.labels.alertname ?? '';
    const others = labelsText(a.labels, ['alertname']);
    const summary = a.annotations.summary?.trim();
    const title = summary || (alertname && others ? `${alertname} (${others})` : alertname || others || 'Alert');
    const payload: Record<string, unknown> = {
      status: a.status,
      alertname,
      title,
      description: a.annotations.description?.trim() ?? '',
      severity_label: a.labels.severity ?? '',
      labels: a.labels,
      labels_text: others,
      annotations: a.annotations,
      starts_at: a.startsAt,
      ends_at: a.status === 'resolved' ? a.endsAt : '',
      started: displayTime(a.startsAt),
      ended: a.status === 'resolved' ? displayTime(a.endsAt) : '',
      fingerprint: a.fingerprint,
      correlation_key: correlationKey(a),
      receiver: n.receiver,
      group_key: n.groupKey,
      external_url: n.externalURL,
    };
    const duration = a.status === 'resolved' ? minutesBetween(a.startsAt, a.endsAt) : undefined;
    if (duration !== undefined) payload.duration_minutes = duration;
    if (a.generatorURL) payload.url = a.generatorURL;
    const runbook = a.annotations.runbook_url?.trim();
    if (runbook) payload.runbook_url = runbook;
    if (i === shown.length - 1) {
      if (n.truncatedAlerts > 0) payload.truncated_alerts = n.truncatedAlerts;
      if (omitted > 0) payload.omitted_alerts = omitted;
    }
    return {
      type: a.status === 'firing' ? 'alert_firing' : 'alert_resolved',
      payload,
      severity: a.status === 'firing' ? severityOf(a.labels.severity) : 'info',
    };
  });
}
