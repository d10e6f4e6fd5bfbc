/** The event type a Gotify-compatible provider emits: one per message an application posts. */

import type { EventSpec } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';

export const GotifyMessagePayload = Type.Object({
  /**
   * As sent; empty when the sender gave none (templates then show the provider's name, as Gotify shows the
   * application's).
   */
  title: Type.String(),
  message: Type.String(),
  /** Gotify's priority: 0–3 low, 4–7 normal, 8–10 high; the provider's default when the sender gave none. */
  priority: Type.Integer(),
  /** The sender marked the message as Markdown (`extras["client::display"].contentType`). */
  markdown: Type.Boolean(),
  /** The click URL the sender attached (`extras["client::notification"].click.url`). */
  url: Type.Optional(Type.String()),
  source_ip: Type.String(),
});

export const events: Record<string, EventSpec> = {
  gotify_message: {
    payload: GotifyMessagePayload,
    quietHours: 'defer',
    // The declared default; each event carries the severity of its priority (0–3 info, 4–7 warning, 8+ critical).
    severity: 'info',
    description: 'An application posted a message to the Gotify-compatible endpoint',
    example: {
      title: 'Backup',
      message: '**nas**: backup finished in 4 min (3.1 GB).',
      priority: 5,
      markdown: true,
      source_ip: '192.0.2.10',
    },
  },
};
