/** Configuration of a Signal target: a signal-cli REST API server, the sender and the recipients. */

import type { ConfigProblem, Static } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';

/** A phone number in E.164 form: `+`, country code, 7 to 15 digits in all. */
export const E164 = '^\\+[1-9][0-9]{6,14}$';
const GROUP = 'group\\.[A-Za-z0-9+/]+={0,2}';
const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
export const RECIPIENT = `^(\\+[1-9][0-9]{6,14}|${GROUP}|${UUID})$`;

export const configSchema = Type.Object({
  api_url: Type.String({
    pattern: '^https?://[^/?#]+',
    description: 'Address of the signal-cli REST API server, e.g. http://192.168.1.20:8080',
  }),
  number: Type.String({
    pattern: E164,
    description: 'The sender: the number registered on that server, in international format, e.g. +4915112345678',
  }),
  recipients: Type.Array(Type.String({ pattern: RECIPIENT }), {
    minItems: 1,
    maxItems: 20,
    uniqueItems: true,
    description:
      'Who gets the messages: numbers (+4915112345678), group ids (group.…, from GET /v1/groups/<number>) or ' +
      'account UUIDs',
  }),
  text_mode: Type.Union([Type.Literal('styled'), Type.Literal('normal')], {
    default: 'styled',
    description:
      'Styled: bold title and literal text (signal-cli REST API 0.96 or newer); normal: plain text for older servers',
  }),
});

export type SignalConfig = Static<typeof configSchema>;

/**
 * True when `id` is a group id the REST API accepts: `group.` and the base64 of signal-cli's base64
 * group id, which decodes to the 32 bytes of a Signal group.
 */
export function isGroupId(id: string): boolean {
  if (!id.startsWith('group.')) return false;
  try {
    const inner = Buffer.from(id.slice('group.'.length), 'base64').toString('latin1');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(inner)) return false;
    return Buffer.from(inner, 'base64').length === 32;
  } catch {
    return false;
  }
}

/**
 * Checks the schema cannot express, run when a config is saved: the server's base address (not an
 * endpoint of it) and group ids that decode to a Signal group.
 */
export function validateSignalConfig(cfg: SignalConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  let url: URL | undefined;
  try {
    url = new URL(cfg.api_url);
  } catch {
    problems.push({ path: '/api_url', message: 'is not a valid URL', code: 'format', params: { format: 'uri' } });
  }
  if (url && /\/v[12]\/|\/v[12]$/.test(url.pathname)) {
    problems.push({
      path: '/api_url',
      message: "must be the server's address, without an API path",
      code: 'base_address',
      detail: `Give the server's address only (e.g. ${url.origin}); Herald adds /v2/send itself.`,
    });
  }
  cfg.recipients.forEach((r, i) => {
    if (r.startsWith('group.') && !isGroupId(r)) {
      // The pattern keyword, as for any malformed recipient: the web client words it in the user's language.
      problems.push({
        path: `/recipients/${i}`,
        message: 'is not a group id of the REST API',
        code: 'pattern',
        params: { pattern: RECIPIENT },
        detail:
          'Copy the group\'s "id" (group.…) from GET /v1/groups/<number> on the REST API server, not its internal_id.',
      });
    }
  });
  return problems;
}
