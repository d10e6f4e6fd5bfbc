/** The event type an ntfy-compatible provider emits: one per message published to its topic. */

import type { EventSpec } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';

export const NtfyMessagePayload = Type.Object({
  /** As sent; empty when the publisher gave none (templates then show the provider's name). */
  title: Type.String(),
  /** The message; `triggered` for a publish without one, as ntfy stores it. */
  message: Type.String(),
  /** ntfy's priority, 1 (min) to 5 (max); 3 when the publisher gave none. */
  priority: Type.Integer({ minimum: 1, maximum: 5 }),
  /** The tags that are not emoji short codes. */
  tags: Type.Array(Type.String()),
  /** The emoji of the tags that are short codes (`warning` → ⚠️), space-separated, shown before the title. */
  emojis: Type.String(),
  /** The publisher asked for Markdown (`Markdown: yes`, `"markdown": true`). */
  markdown: Type.Boolean(),
  /** The click URL (`Click`), when it is an http(s) URL. */
  url: Type.Optional(Type.String()),
  source_ip: Type.String(),
});

export const events: Record<string, EventSpec> = {
  ntfy_message: {
    payload: NtfyMessagePayload,
    quietHours: 'defer',
    // The declared default; each event carries the severity of its priority (1–3 info, 4 warning, 5 critical).
    severity: 'info',
    description: 'A message was published to the ntfy-compatible topic',
    example: {
      title: 'Backup failed',
      message: 'nas: /srv is full (100%).',
      priority: 5,
      tags: ['backup'],
      emojis: '⚠️ 💀',
      markdown: false,
      source_ip: '192.0.2.10',
    },
  },
};
