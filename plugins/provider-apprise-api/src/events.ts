/** The event type an Apprise-API-compatible provider emits: one per notification posted to its key. */

import type { EventSpec } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';

export const AppriseNotificationPayload = Type.Object({
  /** As sent; empty when the sender gave none (templates then show the provider's name). */
  title: Type.String(),
  /** The body; for `format: html`, its text. */
  body: Type.String(),
  /** Apprise's notification type. */
  type: Type.Union([Type.Literal('info'), Type.Literal('success'), Type.Literal('warning'), Type.Literal('failure')]),
  /** The format the sender wrote the body in. */
  format: Type.Union([Type.Literal('text'), Type.Literal('markdown'), Type.Literal('html')]),
  /** `format` is `markdown`: the body reaches Markdown targets as written. */
  markdown: Type.Boolean(),
  /** The sender's tags (`tag`), as sent; Herald does not filter by them. */
  tags: Type.Array(Type.String()),
  source_ip: Type.String(),
});

export const events: Record<string, EventSpec> = {
  apprise_notification: {
    payload: AppriseNotificationPayload,
    quietHours: 'defer',
    // The declared default; each event carries the severity of its type (info/success info, warning, failure critical).
    severity: 'info',
    description: 'A notification was posted to the Apprise-API-compatible key',
    example: {
      title: 'Backup failed',
      body: 'nas: /srv is full (100%).',
      type: 'failure',
      format: 'text',
      markdown: false,
      tags: ['backup'],
      source_ip: '192.0.2.10',
    },
  },
};
