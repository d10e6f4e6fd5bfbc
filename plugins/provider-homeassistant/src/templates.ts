/** Default notification templates, English and Russian, one per event type. */
import type { TemplateSet } from '@herald/plugin-api';

export const TEMPLATES: TemplateSet = {
  en: {
    ha_state_changed: {
      title: '{{friendly_name}}: {{new_state}}{{#if unit}} {{unit}}{{/if}}',
      body:
        '{{friendly_name}} ({{entity_id}}) changed from {{old_state}} to ' +
        '{{new_state}}{{#if unit}} {{unit}}{{/if}}.',
    },
    automation_triggered: {
      title: 'Automation: {{name}}',
      body: 'Automation {{name}} ({{entity_id}}) ran.{{#if source}} Trigger: {{source}}.{{/if}}',
    },
    service_called: {
      title: 'Service called: {{domain}}.{{service}}',
      body:
        'Service {{domain}}.{{service}} was called.{{#if service_data_keys}} Fields:{{#each service_data_keys}} ' +
        '{{.}}{{/each}}.{{/if}}',
    },
    event_fired: {
      title: 'Home Assistant event: {{event_type}}',
      body: 'Event {{event_type}} fired.\n{{data_excerpt}}',
    },
    ha_status_connected: {
      title: 'Home Assistant connected',
      body:
        'Connected to Home Assistant at {{host}}{{#if ha_version}} (version ' +
        '{{ha_version}}){{/if}}.{{#if downtime_seconds}} The connection was down for {{downtime_seconds}} s.{{/if}}',
    },
    ha_status_disconnected: {
      title: 'Home Assistant connection lost',
      body:
        'The connection to Home Assistant at {{host}} was lost after {{connected_seconds}} s: {{reason}}. ' +
        'Reconnecting.',
    },
  },
  ru: {
    ha_state_changed: {
      title: '{{friendly_name}}: {{new_state}}{{#if unit}} {{unit}}{{/if}}',
      body:
        '{{friendly_name}} ({{entity_id}}): состояние изменилось с {{old_state}} на {{new_state}}{{#if unit}} ' +
        '{{unit}}{{/if}}.',
    },
    automation_triggered: {
      title: 'Автоматизация: {{name}}',
      body: 'Сработала автоматизация {{name}} ({{entity_id}}).{{#if source}} Триггер: {{source}}.{{/if}}',
    },
    service_called: {
      title: 'Вызов службы: {{domain}}.{{service}}',
      body:
        'Вызвана служба {{domain}}.{{service}}.{{#if service_data_keys}} Поля:{{#each service_data_keys}} ' +
        '{{.}}{{/each}}.{{/if}}',
    },
    event_fired: {
      title: 'Событие Home Assistant: {{event_type}}',
      body: 'Произошло событие {{event_type}}.\n{{data_excerpt}}',
    },
    ha_status_connected: {
      title: 'Home Assistant: соединение установлено',
      body:
        'Соединение с Home Assistant ({{host}}) установлено{{#if ha_version}}, версия ' +
        '{{ha_version}}{{/if}}.{{#if downtime_seconds}} Связи не было {{downtime_seconds}} с.{{/if}}',
    },
    ha_status_disconnected: {
      title: 'Home Assistant: соединение потеряно',
      body:
        'Соединение с Home Assistant ({{host}}) потеряно через {{connected_seconds}} с работы: {{reason}}. Идёт ' +
        'переподключение.',
    },
  },
};
