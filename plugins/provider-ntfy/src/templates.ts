/** Default English and Russian templates of an ntfy message: emoji before the title, as ntfy's apps show them. */
import type { TemplateSet } from '@herald/plugin-api';

const title = '{{#if emojis}}{{emojis}} {{/if}}{{#if title}}{{title}}{{else}}{{provider_name}}{{/if}}';
const message = '{{#if markdown}}{{markdown message}}{{else}}{{message}}{{/if}}';

export const templates: TemplateSet = {
  en: { ntfy_message: { title, body: `${message}{{#if tags}}\n\nTags: {{tags}}{{/if}}\n\nSource: {{source_ip}}` } },
  ru: { ntfy_message: { title, body: `${message}{{#if tags}}\n\nТеги: {{tags}}{{/if}}\n\nИсточник: {{source_ip}}` } },
};
