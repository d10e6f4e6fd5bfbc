/** Default English and Russian templates for the Planka events. */
import type { TemplateSet } from '@herald/plugin-api';

const link = '{{#if card_url}}\n\n{{card_url}}{{/if}}';

export const templates: TemplateSet = {
  en: {
    card_created: {
      title: 'New card: {{card_name}}',
      body:
        '{{user}} added it to {{list_name}} on ' +
        '{{board_name}}.{{#if description_excerpt}}\n\n{{description_excerpt}}{{/if}}' +
        link,
    },
    card_moved: {
      title: 'Card moved: {{card_name}}',
      body: '{{user}} moved it from {{from_list}} to {{to_list}} on {{board_name}}.' + link,
    },
    card_updated: {
      title: 'Card edited: {{card_name}}',
      body:
        '{{user}} edited the card on {{board_name}}.{{#if previous_name}}\nPreviously: {{previous_name}}{{/if}}' + link,
    },
    card_commented: {
      title: 'Comment on {{card_name}}',
      body: '{{user}} wrote:\n{{comment_excerpt}}' + link,
    },
    card_due_date_set: {
      title: 'Due date for {{card_name}}',
      body: '{{user}} set the due date to {{due_date}} ({{board_name}}, {{list_name}}).' + link,
    },
  },
  ru: {
    card_created: {
      title: 'Новая карточка: {{card_name}}',
      body:
        'Список «{{list_name}}», доска «{{board_name}}». Автор: ' +
        '{{user}}.{{#if description_excerpt}}\n\n{{description_excerpt}}{{/if}}' +
        link,
    },
    card_moved: {
      title: 'Карточка перемещена: {{card_name}}',
      body: 'Из списка «{{from_list}}» в «{{to_list}}» (доска «{{board_name}}»). Пользователь: {{user}}.' + link,
    },
    card_updated: {
      title: 'Карточка изменена: {{card_name}}',
      body:
        'Изменены название или описание (доска «{{board_name}}»). Пользователь: ' +
        '{{user}}.{{#if previous_name}}\nПрежнее название: {{previous_name}}{{/if}}' +
        link,
    },
    card_commented: {
      title: 'Комментарий к карточке {{card_name}}',
      body: '{{user}} пишет:\n{{comment_excerpt}}' + link,
    },
    card_due_date_set: {
      title: 'Срок для карточки {{card_name}}',
      body: 'Новый срок: {{due_date}} (доска «{{board_name}}», список «{{list_name}}»). Пользователь: {{user}}.' + link,
    },
  },
};
