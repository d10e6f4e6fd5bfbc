/** Configuration of a Google Chat target: one space's incoming-webhook URL. */
import { Secret, Type } from '@herald/plugin-api';
import type { ConfigProblem, Static } from '@herald/plugin-api';

export const configSchema = Type.Object({
  // The URL is the credential: its `token` parameter lets anyone holding it post to the space.
  url: Secret({
    pattern: '^https?://[^/?#]+/',
    description: 'Incoming webhook URL of the space, e.g. https://chat.googleapis.com/v1/spaces/AAAA…/messages?key=…&token=… (kept secret)',
  }),
});

export type GoogleChatConfig = Static<typeof configSchema>;

/** Query parameters Herald sets itself on every post (threading). */
export const MANAGED_PARAMS = ['threadKey', 'messageReplyOption', 'requestId'] as const;

/**
 * Checks the schema cannot express, run when a config is saved: an https address of a space's
 * messages (`/v1/spaces/{space}/messages`) with its `key` and `token`, and no threading parameters
 * (Herald threads the messages itself).
 */
export function validateGoogleChatConfig(cfg: GoogleChatConfig): ConfigProblem[] {
  let url: URL;
  try { url = new URL(cfg.url); } catch {
    return [{ path: '/url', message: 'is not a valid URL', code: 'format', params: { format: 'uri' } }];
  }
  const problems: ConfigProblem[] = [];
  if (url.protocol !== 'https:') {
    problems.push({ path: '/url', message: 'must be an https:// address', code: 'https_required', detail: 'Google Chat webhooks are https://chat.googleapis.com/… addresses; copy the URL the space shows.' });
  }
  if (!/^\/v1\/spaces\/[^/]+\/messages$/.test(url.pathname)) {
    problems.push({ path: '/url', message: 'is not a space webhook address (…/v1/spaces/<space>/messages)', code: 'not_a_space_webhook', detail: 'Copy the whole webhook URL from the space\'s Apps & integrations → Webhooks.' });
  }
  if (!url.searchParams.get('key') || !url.searchParams.get('token')) {
    problems.push({ path: '/url', message: 'lacks its key or token parameter', code: 'webhook_incomplete', detail: 'The webhook URL ends with ?key=…&token=…; copy it whole.' });
  }
  const managed = MANAGED_PARAMS.filter((p) => url.searchParams.has(p));
  if (managed.length) {
    problems.push({
      path: '/url', message: `has ${managed.join(', ')}, which Herald sets itself`, code: 'thread_managed',
      detail: `Remove ${managed.map((p) => `${p}=…`).join(' and ')} from the URL: Herald starts a thread per notification and posts later states of the same thing into it.`,
    });
  }
  return problems;
}
