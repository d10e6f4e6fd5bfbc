/** Default English and Russian templates of an Apprise notification. */
import type { TemplateSet } from '@herald/plugin-api';

const title = '{{#if title}}{{title}}{{else}}{{provider_name}}{{/if}}';
const body = '{{#if markdown}}{{markdown body}}{{else}}{{body}}{{/if}}';

export const templates: TemplateSet = {
  en: { apprise_notification: { title, body: `${body}\n\nSource: {{source_ip}}` } },
  ru: { apprise_notification: { title, body: `${body}\n\nИсточник: {{source_ip}}` } },
};
