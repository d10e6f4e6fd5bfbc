/** Default notification templates, English and Russian, one per event type. */
import type { TemplateSet } from '@herald/plugin-api';

export const TEMPLATES: TemplateSet = {
  en: {
    ups_on_battery: {
      title: 'UPS {{ups}} is on battery',
      body:
        'Mains power failed: UPS {{ups}} ({{server}}) runs on battery.{{#if battery_charge}} Charge ' +
        '{{battery_charge}}%.{{/if}}{{#if battery_runtime_minutes}} About {{battery_runtime_minutes}} min ' +
        'left.{{/if}} Status: {{status}}.',
    },
    ups_online: {
      title: 'UPS {{ups}}: power is back',
      body:
        'UPS {{ups}} ({{server}}) is on line power again{{#if on_battery_seconds}} after {{on_battery_seconds}} s ' +
        'on battery{{/if}}.{{#if battery_charge}} Charge {{battery_charge}}%.{{/if}} Status: {{status}}.',
    },
    ups_low_battery: {
      title: 'UPS {{ups}}: battery low',
      body:
        'UPS {{ups}} ({{server}}) battery is low{{#if battery_charge}}: {{battery_charge}}%{{/if}} (threshold ' +
        '{{threshold_percent}}%).{{#if battery_runtime_minutes}} About {{battery_runtime_minutes}} min left.{{/if}} ' +
        'Shutdown may follow. Status: {{status}}.',
    },
    ups_battery_replace: {
      title: 'UPS {{ups}}: replace the battery',
      body: 'UPS {{ups}} ({{server}}) reports that its battery needs replacing. Status: {{status}}.',
    },
    ups_comm_lost: {
      title: 'UPS {{ups}}: no contact',
      body:
        'Herald cannot read UPS {{ups}} on {{server}}: {{reason}}. ' +
        'Power events are not seen until contact is back.',
    },
    ups_comm_restored: {
      title: 'UPS {{ups}}: contact restored',
      body:
        'UPS {{ups}} on {{server}} answers again{{#if downtime_seconds}} after {{downtime_seconds}} s{{/if}}. ' +
        'Status: {{status}}.',
    },
  },
  ru: {
    ups_on_battery: {
      title: 'ИБП {{ups}} работает от батареи',
      body:
        'Пропало сетевое питание: ИБП {{ups}} ({{server}}) работает от батареи.{{#if battery_charge}} Заряд ' +
        '{{battery_charge}}%.{{/if}}{{#if battery_runtime_minutes}} Осталось около {{battery_runtime_minutes}} ' +
        'мин.{{/if}} Статус: {{status}}.',
    },
    ups_online: {
      title: 'ИБП {{ups}}: питание восстановлено',
      body:
        'ИБП {{ups}} ({{server}}) снова работает от сети{{#if on_battery_seconds}}, от батареи — ' +
        '{{on_battery_seconds}} с{{/if}}.{{#if battery_charge}} Заряд {{battery_charge}}%.{{/if}} Статус: ' +
        '{{status}}.',
    },
    ups_low_battery: {
      title: 'ИБП {{ups}}: низкий заряд батареи',
      body:
        'Батарея ИБП {{ups}} ({{server}}) разряжена{{#if battery_charge}}: {{battery_charge}}%{{/if}} (порог ' +
        '{{threshold_percent}}%).{{#if battery_runtime_minutes}} Осталось около {{battery_runtime_minutes}} ' +
        'мин.{{/if}} Возможно отключение. Статус: {{status}}.',
    },
    ups_battery_replace: {
      title: 'ИБП {{ups}}: замените батарею',
      body: 'ИБП {{ups}} ({{server}}) сообщает, что батарею нужно заменить. Статус: {{status}}.',
    },
    ups_comm_lost: {
      title: 'ИБП {{ups}}: нет связи',
      body:
        'Herald не может получить данные ИБП {{ups}} с {{server}}: {{reason}}. События питания не видны, пока связь ' +
        'не восстановится.',
    },
    ups_comm_restored: {
      title: 'ИБП {{ups}}: связь восстановлена',
      body:
        'ИБП {{ups}} на {{server}} снова отвечает{{#if downtime_seconds}} (связи не было {{downtime_seconds}} ' +
        'с){{/if}}. Статус: {{status}}.',
    },
  },
};
