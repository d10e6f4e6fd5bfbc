/**
 * Grafana alerting's webhook contact point payload (its default body, `version: "1"`) read and
 * turned into one event per alert: `grafana_alert_firing` or `grafana_alert_resolved`, correlated
 * by the alert's fingerprint so that the resolution edits the message of the firing alert.
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
  silenceURL: string;
  dashboardURL: string;
  panelURL: string;
  imageURL: string;
  values: Record<string, number>;
  valueString: string;
}

export interface Notification {
  receiver: string;
  orgId?: number;
  alerts: Alert[];
  groupKey: string;
  externalURL: string;
  truncatedAlerts: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const reject = (what: string): never => {
  throw new WebhookRejectedError(422, `not a Grafana alerting webhook payload: ${what}`);
};

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

function numberMap(v: unknown, path: string): Record<string, number> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) return reject(`${path} must be an object`);
  const out: Record<string, number> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== 'number') return reject(`${path}.${k} must be a number`);
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
  if (!isObject(body)) return reject('the body must be a JSON object (a custom payload template is not supported)');
  if (!Array.isArray(body.alerts)) return reject('alerts must be a list (a custom payload template is not supported)');
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
      silenceURL: optString(a.silenceURL, `${path}.silenceURL`),
      dashboardURL: optString(a.dashboardURL, `${path}.dashboardURL`),
      panelURL: optString(a.panelURL, `${path}.panelURL`),
      imageURL: optString(a.imageURL, `${path}.imageURL`),
      values: numberMap(a.values, `${path}.values`),
      valueString: optString(a.valueString, `${path}.valueString`),
    };
  });
  const truncated = body.truncatedAlerts ?? 0;
  if (typeof truncated !== 'number' || !Number.isInteger(truncated) || truncated < 0)
    return reject('truncatedAlerts must be a whole number');
  const orgId = body.orgId;
  if (orgId !== undefined && orgId !== null && typeof orgId !== 'number') return reject('orgId must be a number');
  return {
    receiver: optString(body.receiver, 'receiver'),
    ...(typeof orgId === 'number' ? { orgId } : {}),
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

/** Labels Grafana adds that say nothing about the alert instance. */
const HIDDEN = (k: string) => k === 'alertname' || k === 'grafana_folder' || k.startsWith('__');

/** `name=value, …` of the alert's own labels, sorted by name. */
export function labelsText(labels: Record<string, string>): string {
  return Object.keys(labels)
    .filter((k) => !HIDDEN(k))
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(', ');
}

/** `B=44.2394, C=1`: the query and expression results that made the alert fire, sorted by ref id. */
export function valuesText(values: Record<string, number>): string {
  return Object.keys(values)
    .sort()
    .map((k) => {
      const v = values[k]!;
      return `${k}=${Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)))}`;
    })
    .join(', ');
}

/** Grafana's fingerprint of the alert instance, or a hash of the sorted labels when there is none. */
export function correlationKey(alert: Pick<Alert, 'fingerprint' | 'labels'>): string {
  if (alert.fingerprint.trim()) return alert.fingerprint.trim();
  const sorted = Object.keys(alert.labels)
    .sort()
    .map((k) => [k, alert.labels[k]]);
  return `labels:${createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 32)}`;
}

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
    const others = labelsText(a.labels);
    const summary = a.annotations.summary?.trim();
    const title =
      summary || (alertname && others ? `${alertname} (${others})` : alertname || others || 'Grafana alert');
    const resolved = a.status === 'resolved';
    const payload: Record<string, unknown> = {
      status: a.status,
      alertname,
      title,
      description: a.annotations.description?.trim() ?? '',
      severity_label: a.labels.severity ?? '',
      folder: a.labels.grafana_folder ?? '',
      labels: a.labels,
      labels_text: others,
      annotations: a.annotations,
      values: a.values,
      values_text: valuesText(a.values) || a.valueString,
      starts_at: a.startsAt,
      ends_at: resolved ? a.endsAt : '',
      started: displayTime(a.startsAt),
      ended: resolved ? displayTime(a.endsAt) : '',
      fingerprint: a.fingerprint,
      correlation_key: correlationKey(a),
      receiver: n.receiver,
      group_key: n.groupKey,
      external_url: n.externalURL,
    };
    const duration = resolved ? minutesBetween(a.startsAt, a.endsAt) : undefined;
    if (duration !== undefined) payload.duration_minutes = duration;
    if (n.orgId !== undefined) payload.org_id = n.orgId;
    for (const [field, value] of [
      ['url', a.generatorURL],
      ['silence_url', a.silenceURL],
      ['dashboard_url', a.dashboardURL],
      ['panel_url', a.panelURL],
      ['image_url', a.imageURL],
    ] as const) {
      if (value) payload[field] = value;
    }
    const runbook = a.annotations.runbook_url?.trim();
    if (runbook) payload.runbook_url = runbook;
    if (i === shown.length - 1) {
      if (n.truncatedAlerts > 0) payload.truncated_alerts = n.truncatedAlerts;
      if (omitted > 0) payload.omitted_alerts = omitted;
    }
    return {
      type: resolved ? 'grafana_alert_resolved' : 'grafana_alert_firing',
      payload,
      severity: resolved ? 'info' : severityOf(a.labels.severity),
    };
  });
}
