/** Configuration of a Google Chat target: one space's incoming-webhook URL. */

import type { ConfigProblem, Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

export const configSchema = Type.Object({
  // The URL is the credential: its `token` parameter lets anyone holding it post to the space.
  url: Secret({
    pattern: '^https?://[^/?#]+/',
    description:
      'Incoming webhook URL of the space, e.g. https://chat.googleapis.com/v1/spaces/AAAA…/messages?key=…&token=… ' +
      '(kept secret)',
  }),
});

export type GoogleChatConfig = Static<typeof configSchema>;

/** The form of a space's webhook URL. */
export const WEBHOOK_SHAPE = '^https://[^/?#]+/v1/spaces/[^/?#]+/messages\\?.*key=.*token=';

/** Query parameters Herald sets itself on every post (threading). */
export const MANAGED_PARAMS = ['threadKey', 'messageReplyOption', 'requestId'] as const;

/**
 * Checks the schema cannot express, run when a config is saved: an https address of a space's
 * messages (`/v1/spaces/{space}/messages`) with its `key` and `token`, and no threading parameters
 * (Herald threads the messages itself).
 */
export function validateGoogleChatConfig(cfg: GoogleChatConfig): ConfigProblem[] {
  let url: URL;
  try {
    url = new URL(cfg.url);
  } catch {
    return [{ path: '/url', message: 'is not a valid URL', code: 'format', params: { format: 'uri' } }];
  }
  const problems: ConfigProblem[] = [];
  // The shape of a space webhook. Reported with the pattern keyword, so the web client says it in
  // the user's language with the field's hint (which shows the form); the message says what differs.
  const shape: string[] = [];
  if (url.protocol !== 'https:') shape.push('is not an https:// address');
  if (!/^\/v1\/spaces\/[^/]+\/messages$/.test(url.pathname))
    shape.push("is not a space's messages address (…/v1/spaces/<space>/messages)");
  if (!url.searchParams.get('key') || !url.searchParams.get('token')) shape.push('lacks its key or token parameter');
  if (shape.length) {
    problems.push({
      path: '/url',
      message: shape.join('; '),
      code: 'pattern',
      params: { pattern: WEBHOOK_SHAPE },
      detail:
        'Copy the whole webhook URL (https://chat.googleapis.com/v1/spaces/…/messages?key=…&token=…) from the ' +
        "space's Apps & integrations → Webhooks.",
    });
  }
  const managed = MANAGED_PARAMS.filter((p) => url.searchParams.has(p));
  if (managed.length) {
    problems.push({
      path: '/url',
      message: `has ${managed.join(', ')}, which Herald sets itself`,
      code: 'thread_managed',
      detail:
        `Remove ${managed.map((p) => `${p}=…`).join(' and ')} from the URL: Herald starts a thread per notification ` +
        'and posts later states of the same thing into it.',
    });
  }
  return problems;
}
