/** Configuration of a Microsoft Teams target: one Workflows webhook URL. */

import type { ConfigProblem, Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';

export const configSchema = Type.Object({
  // The URL is the credential: its `sig` query parameter signs it, and anyone holding it can post.
  url: Secret({
    pattern: '^https?://[^/?#]+/',
    description:
      'HTTP POST URL of a Teams Workflows webhook, e.g. https://….logic.azure.com/workflows/…&sig=… (kept secret: ' +
      'it carries a signature)',
  }),
});

export type TeamsConfig = Static<typeof configSchema>;

/**
 * Checks the schema cannot express, run when a config is saved: an https URL, a Workflows URL
 * rather than a retired Office 365 connector, a URL that carries its signature, and one not
 * copied with HTML-escaped ampersands.
 */
export function validateTeamsConfig(cfg: TeamsConfig): ConfigProblem[] {
  let url: URL;
  try {
    url = new URL(cfg.url);
  } catch {
    return [{ path: '/url', message: 'is not a valid URL', code: 'format', params: { format: 'uri' } }];
  }
  const problems: ConfigProblem[] = [];
  if (url.protocol !== 'https:') {
    // The pattern keyword lets the web client say it in the user's language, with the field's hint.
    problems.push({
      path: '/url',
      message: 'must be an https:// address',
      code: 'pattern',
      params: { pattern: '^https://' },
      detail: 'Teams Workflows webhooks are https:// addresses; copy the HTTP POST URL the workflow shows.',
    });
  }
  if (/(^|\.)webhook\.office\.com$/i.test(url.hostname)) {
    problems.push({
      path: '/url',
      message: 'is an Office 365 connector URL; connectors are retired',
      code: 'connector_retired',
      detail:
        'Incoming webhooks made with Office 365 connectors are retired. In Teams, create a workflow from the ' +
        '"Post to a channel when a webhook request is received" template and paste its URL.',
    });
    return problems;
  }
  if (cfg.url.includes('&amp;')) {
    problems.push({
      path: '/url',
      message: 'contains "&amp;" where "&" belongs',
      code: 'url_html_escaped',
      detail: 'The URL was copied with HTML-escaped ampersands; replace every "&amp;" with "&".',
    });
  } else if (!url.searchParams.get('sig')) {
    problems.push({
      path: '/url',
      message: 'has no sig parameter',
      code: 'webhook_unsigned',
      detail:
        'The URL carries no signature (sig=…): the workflow only accepts signed-in callers. In the workflow ' +
        'trigger, set "Who can trigger the flow" to "Anyone" and copy the new URL.',
    });
  }
  return problems;
}
