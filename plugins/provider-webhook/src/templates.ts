/** Default English and Russian templates of the generic webhook event. */
import type { TemplateSet } from '@herald/plugin-api';

export const templates: TemplateSet = {
  en: {
    webhook_received: {
      title: '{{#if title}}{{title}}{{else}}Webhook received{{/if}}',
      body: '{{#if body}}{{body}}\n\n{{/if}}Source: {{source_ip}}',
    },
  },
  ru: {
    webhook_received: {
      title: '{{#if title}}{{title}}{{else}}Получен вебхук{{/if}}',
      body: '{{#if body}}{{body}}\n\n{{/if}}Источник: {{source_ip}}',
    },
  },
};
