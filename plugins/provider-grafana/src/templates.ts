/** Default notification templates, English and Russian. */
import type { TemplateSet } from '@herald/plugin-api';

const more = {
  en:
    '{{#if truncated_alerts}}\n\n…and {{truncated_alerts}} more alerts not sent by Grafana (Max Alerts).{{/if}}' +
    '{{#if omitted_alerts}}\n…and {{omitted_alerts}} more alerts not shown: Herald reports up to 100 per ' +
    'notification.{{/if}}',
  ru:
    '{{#if truncated_alerts}}\n\n…и ещё оповещений, которые Grafana не отправила (Max Alerts): ' +
    '{{truncated_alerts}}.{{/if}}' +
    '{{#if omitted_alerts}}\n…и ещё не показанных оповещений (Herald берёт до 100 из одного уведомления): ' +
    '{{omitted_alerts}}.{{/if}}',
};

const details = {
  en:
    '{{#if values_text}}\nValues: {{values_text}}{{/if}}{{#if labels_text}}\nLabels: ' +
    '{{labels_text}}{{/if}}{{#if folder}}\nFolder: {{folder}}{{/if}}' +
    '{{#if dashboard_url}}\nDashboard: {{dashboard_url}}{{/if}}{{#if panel_url}}\nPanel: {{panel_url}}{{/if}}',
  ru:
    '{{#if values_text}}\nЗначения: {{values_text}}{{/if}}{{#if labels_text}}\nМетки: ' +
    '{{labels_text}}{{/if}}{{#if folder}}\nПапка: {{folder}}{{/if}}' +
    '{{#if dashboard_url}}\nДашборд: {{dashboard_url}}{{/if}}{{#if panel_url}}\nПанель: {{panel_url}}{{/if}}',
};

export const TEMPLATES: TemplateSet = {
  en: {
    grafana_alert_firing: {
      title: '🔥 Firing: {{title}}',
      body:
        '{{#if description}}{{description}}\n\n{{/if}}Firing{{#if started}} since ' +
        '{{started}}{{/if}}{{#if severity_label}}, severity {{severity_label}}{{/if}}.' +
        details.en +
        '{{#if silence_url}}\nSilence: {{silence_url}}{{/if}}{{#if runbook_url}}\nRunbook: {{runbook_url}}{{/if}}' +
        more.en,
    },
    grafana_alert_resolved: {
      title: '✅ Resolved: {{title}}',
      body:
        '{{#if description}}{{description}}\n\n{{/if}}Resolved{{#if ended}} at ' +
        '{{ended}}{{/if}}{{#if duration_minutes}} after {{duration_minutes}} min{{/if}}.' +
        details.en +
        more.en,
    },
  },
  ru: {
    grafana_alert_firing: {
      title: '🔥 Тревога: {{title}}',
      body:
        '{{#if description}}{{description}}\n\n{{/if}}Срабатывает{{#if started}} с ' +
        '{{started}}{{/if}}{{#if severity_label}}, важность {{severity_label}}{{/if}}.' +
        details.ru +
        '{{#if silence_url}}\nЗаглушить: {{silence_url}}{{/if}}{{#if runbook_url}}\nИнструкция: ' +
        '{{runbook_url}}{{/if}}' +
        more.ru,
    },
    grafana_alert_resolved: {
      title: '✅ Устранено: {{title}}',
      body:
        '{{#if description}}{{description}}\n\n{{/if}}Устранено{{#if ended}} в ' +
        '{{ended}}{{/if}}{{#if duration_minutes}}, длилось {{duration_minutes}} мин{{/if}}.' +
        details.ru +
        more.ru,
    },
  },
};
