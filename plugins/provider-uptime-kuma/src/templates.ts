/** Default notification templates, English and Russian. */
import type { TemplateSet } from '@herald/plugin-api';

const at = {
  en: '{{local_time}}{{#if timezone}} ({{timezone}}){{/if}}',
  ru: '{{local_time}}{{#if timezone}} ({{timezone}}){{/if}}',
};
const checked = {
  en: '{{#if target}}\nChecked: {{target}}{{/if}}',
  ru: '{{#if target}}\nПроверяется: {{target}}{{/if}}',
};

export const TEMPLATES: TemplateSet = {
  en: {
    monitor_down: { title: '🔴 Down: {{monitor_name}}', body: `{{message}}${checked.en}\nDown since ${at.en}.` },
    monitor_up: {
      title: '✅ Up: {{monitor_name}}',
      body:
        `{{message}}${checked.en}\nUp since ${at.en}{{#if downtime_minutes}}, after {{downtime_minutes}} min ` +
        `down{{/if}}.{{#if ping_ms}}\nResponse time: {{ping_ms}} ms{{/if}}`,
    },
    monitor_pending: {
      title: '🟡 Pending: {{monitor_name}}',
      body:
        `{{message}}${checked.en}\nFailing since ${at.en}; Uptime Kuma is retrying before calling it ` +
        'down{{#if retries}} (retry {{retries}}){{/if}}.',
    },
    monitor_maintenance: {
      title: '🔧 Maintenance: {{monitor_name}}',
      body: `{{monitor_name}} is under maintenance since ${at.en}.${checked.en}`,
    },
    monitor_test: {
      title: '🧪 Uptime Kuma: test notification',
      body: "Uptime Kuma's notification reaches Herald: {{text}}",
    },
    monitor_notice: { title: '⚠️ Uptime Kuma: notice', body: '{{text}}' },
  },
  ru: {
    monitor_down: {
      title: '🔴 Недоступен: {{monitor_name}}',
      body: `{{message}}${checked.ru}\nНедоступен с ${at.ru}.`,
    },
    monitor_up: {
      title: '✅ Снова доступен: {{monitor_name}}',
      body:
        `{{message}}${checked.ru}\nДоступен с ${at.ru}{{#if downtime_minutes}}, простой {{downtime_minutes}} ` +
        `мин{{/if}}.{{#if ping_ms}}\nВремя ответа: {{ping_ms}} мс{{/if}}`,
    },
    monitor_pending: {
      title: '🟡 Проверка не прошла: {{monitor_name}}',
      body:
        `{{message}}${checked.ru}\nСбой с ${at.ru}; Uptime Kuma проверяет повторно, прежде чем счесть монитор ` +
        'недоступным{{#if retries}} (попытка {{retries}}){{/if}}.',
    },
    monitor_maintenance: {
      title: '🔧 Обслуживание: {{monitor_name}}',
      body: `{{monitor_name}} на обслуживании с ${at.ru}.${checked.ru}`,
    },
    monitor_test: {
      title: '🧪 Uptime Kuma: тестовое уведомление',
      body: 'Уведомление Uptime Kuma доходит до Herald: {{text}}',
    },
    monitor_notice: { title: '⚠️ Uptime Kuma: предупреждение', body: '{{text}}' },
  },
};
