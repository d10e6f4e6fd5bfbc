/** Default English and Russian templates of a Gotify message. */
import type { TemplateSet } from '@herald/plugin-api';

const title = '{{#if title}}{{title}}{{else}}{{provider_name}}{{/if}}';
const message = '{{#if markdown}}{{markdown message}}{{else}}{{message}}{{/if}}';

export const templates: TemplateSet = {
  en: { gotify_message: { title, body: `${message}\n\nSource: {{source_ip}}` } },
  ru: { gotify_message: { title, body: `${message}\n\nИсточник: {{source_ip}}` } },
};
