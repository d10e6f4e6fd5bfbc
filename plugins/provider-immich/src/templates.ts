/** Default English and Russian templates of the Immich event. */
import type { TemplateSet } from '@herald/plugin-api';

export const templates: TemplateSet = {
  en: {
    album_assets_changed: {
      title: 'Album "{{album_name}}" changed',
      body:
        '{{#if added_count}}Added: {{added_count}}{{#each assets_added}}\n+ {{file_name}}{{#if added_by}} ' +
        '({{added_by}}){{/if}}{{/each}}{{/if}}' +
        '{{#if removed_count}}{{#if added_count}}\n\n{{/if}}Removed: {{removed_count}}{{#each assets_removed}}\n− ' +
        '{{#if file_name}}{{file_name}}{{else}}{{id}}{{/if}}{{/each}}{{/if}}' +
        '\n\n{{album_url}}',
    },
  },
  ru: {
    album_assets_changed: {
      title: 'Изменения в альбоме «{{album_name}}»',
      body:
        '{{#if added_count}}Добавлено: {{added_count}}{{#each assets_added}}\n+ {{file_name}}{{#if added_by}} ' +
        '({{added_by}}){{/if}}{{/each}}{{/if}}' +
        '{{#if removed_count}}{{#if added_count}}\n\n{{/if}}Удалено: {{removed_count}}{{#each assets_removed}}\n− ' +
        '{{#if file_name}}{{file_name}}{{else}}{{id}}{{/if}}{{/each}}{{/if}}' +
        '\n\n{{album_url}}',
    },
  },
};
