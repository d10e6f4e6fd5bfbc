/** Default English and Russian templates of the MQTT provider's events. */
import type { TemplateSet } from '@herald/plugin-api';

export const TEMPLATES: TemplateSet = {
  en: {
    mqtt_message: { title: '{{title}}', body: '{{body}}\n\nTopic: {{topic}}' },
    mqtt_status_connected: {
      title: 'MQTT broker {{broker}} connected',
      body:
        '{{#if first_connect}}Subscribed.{{else}}Connected again{{#if downtime_seconds}} after {{downtime_seconds}} ' +
        's{{/if}}.{{/if}}{{#if session_present}} The broker kept the session: messages queued meanwhile ' +
        'follow.{{/if}}',
    },
    mqtt_status_disconnected: {
      title: 'MQTT broker {{broker}} disconnected',
      body: 'Connection lost after {{connected_seconds}} s: {{reason}}. Reconnecting.',
    },
  },
  ru: {
    mqtt_message: { title: '{{title}}', body: '{{body}}\n\nТопик: {{topic}}' },
    mqtt_status_connected: {
      title: 'MQTT-брокер {{broker}} на связи',
      body:
        '{{#if first_connect}}Подписка оформлена.{{else}}Связь восстановлена{{#if downtime_seconds}} через ' +
        '{{downtime_seconds}} с{{/if}}.{{/if}}{{#if session_present}} Брокер сохранил сессию: сообщения, ' +
        'накопившиеся за это время, придут следом.{{/if}}',
    },
    mqtt_status_disconnected: {
      title: 'Связь с MQTT-брокером {{broker}} потеряна',
      body: 'Соединение прервалось через {{connected_seconds}} с: {{reason}}. Herald переподключается.',
    },
  },
};
