/** The event type the email provider emits. */

import type { EventSpec } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';

export const EmailReceivedPayload = Type.Object({
  /** The subject, decoded (RFC 2047), on one line. */
  title: Type.String(),
  /** The text part, or the HTML part converted to text; trimmed and cut to a bounded length. */
  body: Type.String(),
  /** The sender's address: the From header's, else the envelope sender's. */
  from: Type.String(),
  from_name: Type.Optional(Type.String()),
  /** The To and Cc addresses, the provider's own address masked. */
  to: Type.Array(Type.String()),
  /** File names of the attachments (the files themselves are not kept). */
  attachments: Type.Array(Type.String()),
  message_id: Type.Optional(Type.String()),
  source_ip: Type.String(),
});

export const events: Record<string, EventSpec> = {
  email_received: {
    payload: EmailReceivedPayload,
    quietHours: 'defer',
    // The declared default; the subject keywords may raise it for one message (EmittedEvent.severity).
    severity: 'info',
    description: "An email arrived at the provider's address",
    example: {
      title: 'Backup task "Photos" failed',
      body: 'The backup task "Photos" on nas.local failed at 03:12.\nDestination: usb1 (not mounted).',
      from: 'nas@example.org',
      from_name: 'Synology DS920+',
      to: ['********@herald.example.org'],
      attachments: ['backup-log.txt'],
      message_id: '<20260101031200.1234@nas.local>',
      source_ip: '192.0.2.10',
    },
  },
};
