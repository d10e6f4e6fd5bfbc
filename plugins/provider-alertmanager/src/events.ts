/** Event types of the Alertmanager provider: payload schemas, severities, quiet hours, correlation. */

import type { EventSpec } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';

const Opt = Type.Optional;
const Text = Type.String();

/** One alert of a notification. */
export const AlertPayload = Type.Object({
  status: Type.Union([Type.Literal('firing'), Type.Literal('resolved')]),
  /** The `alertname` label ('' without one). */
  alertname: Text,
  /** The `summary` annotation, else the alert name with its other labels. */
  title: Text,
  /** The `description` annotation ('' without one). */
  description: Text,
  /** The raw `severity` label ('' without one). */
  severity_label: Text,
  labels: Type.Record(Type.String(), Type.String()),
  /** `name=value, …` of the labels but `alertname`, sorted. */
  labels_text: Text,
  annotations: Type.Record(Type.String(), Type.String()),
  /** `startsAt` as sent. */
  starts_at: Text,
  /** `endsAt` as sent for a resolved alert, '' while firing. */
  ends_at: Text,
  /** `startsAt` as `2026-01-02 03:04 UTC`. */
  started: Text,
  /** `endsAt` as `2026-01-02 03:04 UTC` for a resolved alert, '' while firing. */
  ended: Text,
  /** Minutes from start to end of a resolved alert. */
  duration_minutes: Opt(Type.Integer({ minimum: 0 })),
  /** `generatorURL`: the alerting rule's expression in Prometheus. */
  url: Opt(Text),
  /** The `runbook_url` annotation. */
  runbook_url: Opt(Text),
  fingerprint: Text,
  /** The fingerprint, or `labels:<hash of the sorted labels>` when the sender gave none. */
  correlation_key: Text,
  receiver: Text,
  group_key: Text,
  external_url: Text,
  /** On the last alert of a notification: alerts Alertmanager left out (`max_alerts`). */
  truncated_alerts: Opt(Type.Integer({ minimum: 1 })),
  /** On the last alert of a notification: alerts past the 100 Herald reports per notification. */
  omitted_alerts: Opt(Type.Integer({ minimum: 1 })),
});

/** A firing alert and its resolution are one message, which the resolution edits. */
const ALERT = { key: ['correlation_key'], thread: 'alert' };

const SAMPLE = {
  alertname: 'DiskFull',
  title: 'Disk /data almost full on nas',
  description: 'Filesystem /data on nas:9100 has 3% space left.',
  severity_label: 'critical',
  labels: { alertname: 'DiskFull', instance: 'nas:9100', job: 'node', mountpoint: '/data', severity: 'critical' },
  labels_text: 'instance=nas:9100, job=node, mountpoint=/data, severity=critical',
  annotations: {
    summary: 'Disk /data almost full on nas',
    description: 'Filesystem /data on nas:9100 has 3% space left.',
    runbook_url: 'https://runbooks.example.net/disk-full',
  },
  starts_at: '2026-01-02T03:04:05.678Z',
  started: '2026-01-02 03:04 UTC',
  url:
    'http://prometheus.example.net:9090/graph?' +
    'g0.expr=node_filesystem_avail_bytes+%2F+node_filesystem_size_bytes+%3C+0.05',
  runbook_url: 'https://runbooks.example.net/disk-full',
  fingerprint: 'a3f1c2d4e5b6a7c8',
  correlation_key: 'a3f1c2d4e5b6a7c8',
  receiver: 'herald',
  group_key: '{}:{alertname="DiskFull"}',
  external_url: 'http://alertmanager.example.net:9093',
};

/**
 * A firing alert's severity comes from its `severity` label (the type's own is the default
 * shown in lists); a critical one goes out in quiet hours, others wait for the morning, and so
 * does the resolution that edits them.
 */
export const EVENTS: Record<string, EventSpec> = {
  alert_firing: {
    payload: AlertPayload,
    quietHours: 'defer',
    severity: 'warning',
    correlation: ALERT,
    description: 'An alert started firing (severity from its severity label).',
    example: { ...SAMPLE, status: 'firing', ends_at: '', ended: '' },
  },
  alert_resolved: {
    payload: AlertPayload,
    quietHours: 'defer',
    severity: 'info',
    correlation: ALERT,
    description: 'A firing alert was resolved; its message is updated where the target can edit.',
    example: {
      ...SAMPLE,
      status: 'resolved',
      ends_at: '2026-01-02T03:46:05.678Z',
      ended: '2026-01-02 03:46 UTC',
      duration_minutes: 42,
    },
  },
};
