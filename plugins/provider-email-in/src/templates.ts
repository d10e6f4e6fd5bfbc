/** Default English and Russian templates of the email event. */
import type { TemplateSet } from '@herald/plugin-api';

export const templates: TemplateSet = {
  en: {
    email_received: {
      title: '{{#if title}}{{title}}{{else}}Email from {{from}}{{/if}}',
      body:
        '{{#if body}}{{body}}\n\n{{/if}}{{#if attachments}}Attachments:{{#each attachments}}\n- ' +
        '{{.}}{{/each}}\n\n{{/if}}From: {{#if from_name}}{{from_name}} ({{from}}){{else}}{{from}}{{/if}}',
    },
  },
  ru: {
    email_received: {
      title: '{{#if title}}{{title}}{{else}}Письмо от {{from}}{{/if}}',
      body:
        '{{#if body}}{{body}}\n\n{{/if}}{{#if attachments}}Вложения:{{#each attachments}}\n- ' +
        '{{.}}{{/each}}\n\n{{/if}}От: {{#if from_name}}{{from_name}} ({{from}}){{else}}{{from}}{{/if}}',
    },
  },
};
