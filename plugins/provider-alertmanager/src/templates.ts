/** Default notification templates, English and Russian. */
import type { TemplateSet } from '@herald/plugin-api';

const more = {
  en:
    '{{#if truncated_alerts}}\n\n…and {{truncated_alerts}} more alerts not sent by Alertmanager (max_alerts).{{/if}}' +
    '{{#if omitted_alerts}}\n…and {{omitted_alerts}} more alerts not shown: Herald reports up to 100 per ' +
    'notification.{{/if}}',
  ru:
    '{{#if truncated_alerts}}\n\n…и ещё оповещений, которые Alertmanager не отправил (max_alerts): ' +
    '{{truncated_alerts}}.{{/if}}' +
    '{{#if omitted_alerts}}\n…и ещё не показанных оповещений (Herald берёт до 100 из одного уведомления): ' +
    '{{omitted_alerts}}.{{/if}}',
};

export const TEMPLATES: TemplateSet = {
  en: {
    alert_firing: {
      title: '🔥 Firing: {{title}}',
      body:
        '{{#if description}}{{description}}\n\n{{/if}}Firing{{#if started}} since ' +
        '{{started}}{{/if}}{{#if severity_label}}, severity {{severity_label}}{{/if}}.' +
        '{{#if labels_text}}\nLabels: {{labels_text}}{{/if}}{{#if runbook_url}}\nRunbook: {{runbook_url}}{{/if}}' +
        more.en,
    },
    alert_resolved: {
      title: '✅ Resolved: {{title}}',
      body:
        '{{#if description}}{{description}}\n\n{{/if}}Resolved{{#if ended}} at ' +
        '{{ended}}{{/if}}{{#if duration_minutes}} after {{duration_minutes}} min{{/if}}.' +
        '{{#if labels_text}}\nLabels: {{labels_text}}{{/if}}' +
        more.en,
    },
  },
  ru: {
    alert_firing: {
      title: '🔥 Тревога: {{title}}',
      body:
        '{{#if description}}{{description}}\n\n{{/if}}Срабатывает{{#if started}} с ' +
        '{{started}}{{/if}}{{#if severity_label}}, важность {{severity_label}}{{/if}}.' +
        '{{#if labels_text}}\nМетки: {{labels_text}}{{/if}}{{#if runbook_url}}\nИнструкция: {{runbook_url}}{{/if}}' +
        more.ru,
    },
    alert_resolved: {
      title: '✅ Устранено: {{title}}',
      body:
        '{{#if description}}{{description}}\n\n{{/if}}Устранено{{#if ended}} в ' +
        '{{ended}}{{/if}}{{#if duration_minutes}}, длилось {{duration_minutes}} мин{{/if}}.' +
        '{{#if labels_text}}\nМетки: {{labels_text}}{{/if}}' +
        more.ru,
    },
  },
};
