/**
 * Default English and Russian templates for every code host event type. Every field a normalizer
 * may leave empty (links, logins, branches, run details, excerpts) sits in an `{{#if}}`, so a sparse
 * delivery reads as a shorter sentence, never as a sentence with a hole in it.
 */
import type { TemplateSet } from '@herald/plugin-api';

const commitList =
  '{{#each commits}}\n• {{short_id}}{{#if message}} {{message}}{{/if}}{{#if author}} — {{author}}{{/if}}{{/each}}';
/** A blank line and the link, when there is one. */
const link = (field: string) => `{{#if ${field}}}\n\n{{${field}}}{{/if}}`;

export const templates: TemplateSet = {
  en: {
    push: {
      title: 'New commits in {{repository}}:{{branch}}',
      body:
        `{{#if forced}}Force-push.\n{{/if}}{{#if pusher}}Pushed by {{pusher}}\n{{/if}}Commits: ` +
        `{{commit_count}}${commitList}{{#if compare_url}}\n\nCompare: {{compare_url}}{{/if}}`,
    },
    pull_request_opened: {
      title: '[{{repository}}] Pull request #{{number}} opened: {{title}}',
      body:
        '{{#if draft}}Draft. {{/if}}{{#if author}}{{author}} wants{{else}}Wants{{/if}} to merge ' +
        '{{#if source_branch}}{{source_branch}}{{else}}the changes{{/if}}{{#if target_branch}} into ' +
        '{{target_branch}}{{/if}}.' +
        `{{#if excerpt}}\n\n{{excerpt}}{{/if}}${link('url')}`,
    },
    pull_request_closed: {
      title: '[{{repository}}] Pull request #{{number}} closed: {{title}}',
      body: `Closed without merging{{#if sender}} by {{sender}}{{/if}}.${link('url')}`,
    },
    pull_request_merged: {
      title: '[{{repository}}] Pull request #{{number}} merged: {{title}}',
      body:
        '{{#if merged_by}}{{merged_by}} merged{{else}}Merged{{/if}} ' +
        '{{#if source_branch}}{{source_branch}}{{else}}the changes{{/if}}{{#if target_branch}} into ' +
        '{{target_branch}}{{/if}}.' +
        link('url'),
    },
    issue_opened: {
      title: '[{{repository}}] Issue #{{number}} opened: {{title}}',
      body:
        '{{#if author}}Opened by {{author}}.{{else}}Opened.{{/if}}{{#if labels}} Labels: ' +
        `{{labels}}.{{/if}}{{#if excerpt}}\n\n{{excerpt}}{{/if}}${link('url')}`,
    },
    issue_closed: {
      title: '[{{repository}}] Issue #{{number}} closed: {{title}}',
      body: `{{#if sender}}Closed by {{sender}}.{{else}}Closed.{{/if}}${link('url')}`,
    },
    issue_comment: {
      title:
        '[{{repository}}] New comment on {{#if is_pull_request}}pull request{{else}}issue{{/if}} #{{number}}: ' +
        '{{title}}',
      body:
        '{{#if comment_excerpt}}{{#if comment_author}}{{comment_author}} wrote{{else}}Comment{{/if}}:\n' +
        '{{comment_excerpt}}' +
        '{{else}}{{#if comment_author}}{{comment_author}} commented{{else}}A comment{{/if}} without text.{{/if}}' +
        `{{#if comment_url}}\n\n{{comment_url}}{{else}}${link('issue_url')}{{/if}}`,
    },
    release_published: {
      title: '[{{repository}}] {{#if prerelease}}Pre-release{{else}}Release{{/if}} {{name}} published',
      body:
        'Tag {{tag}}{{#if author}}, published by ' +
        `{{author}}{{/if}}.{{#if notes_excerpt}}\n\n{{notes_excerpt}}{{/if}}${link('url')}`,
    },
    workflow_run_failed: {
      title: '[{{repository}}] Workflow {{#if workflow}}{{workflow}} {{/if}}failed{{#if branch}} on {{branch}}{{/if}}',
      body:
        'Run {{#if run_number}}#{{run_number}} {{/if}}{{#if run_title}}"{{run_title}}" {{/if}}finished with ' +
        '{{conclusion}}.' +
        '{{#if commit}}\nCommit {{commit}}{{#if actor}}, started by ' +
        '{{actor}}{{/if}}.{{else}}{{#if actor}}\nStarted by {{actor}}.{{/if}}{{/if}}' +
        link('url'),
    },
  },
  ru: {
    push: {
      title: 'Новые коммиты в {{repository}}:{{branch}}',
      body:
        `{{#if forced}}Принудительная отправка (force-push).\n{{/if}}{{#if pusher}}Отправил: ` +
        `{{pusher}}\n{{/if}}Коммитов: {{commit_count}}${commitList}{{#if compare_url}}\n\nСравнение: ` +
        '{{compare_url}}{{/if}}',
    },
    pull_request_opened: {
      title: '[{{repository}}] Открыт pull request #{{number}}: {{title}}',
      body:
        '{{#if draft}}Черновик. {{/if}}{{#if author}}{{author}} предлагает{{else}}Предлагается{{/if}} влить ' +
        '{{#if source_branch}}{{source_branch}}{{else}}изменения{{/if}}{{#if target_branch}} в ' +
        '{{target_branch}}{{/if}}.' +
        `{{#if excerpt}}\n\n{{excerpt}}{{/if}}${link('url')}`,
    },
    pull_request_closed: {
      title: '[{{repository}}] Pull request #{{number}} закрыт: {{title}}',
      body: `Закрыт без слияния.{{#if sender}} Закрыл: {{sender}}.{{/if}}${link('url')}`,
    },
    pull_request_merged: {
      title: '[{{repository}}] Pull request #{{number}} влит: {{title}}',
      body:
        '{{#if source_branch}}Ветка {{source_branch}} влита{{else}}Изменения влиты{{/if}}{{#if target_branch}} в ' +
        '{{target_branch}}{{/if}}.{{#if merged_by}} Выполнил слияние: {{merged_by}}.{{/if}}' +
        link('url'),
    },
    issue_opened: {
      title: '[{{repository}}] Открыта задача #{{number}}: {{title}}',
      body:
        '{{#if author}}Автор: {{author}}.{{else}}Автор не указан.{{/if}}{{#if labels}} Метки: ' +
        `{{labels}}.{{/if}}{{#if excerpt}}\n\n{{excerpt}}{{/if}}${link('url')}`,
    },
    issue_closed: {
      title: '[{{repository}}] Закрыта задача #{{number}}: {{title}}',
      body: `{{#if sender}}Закрыл: {{sender}}.{{else}}Задача закрыта.{{/if}}${link('url')}`,
    },
    issue_comment: {
      title:
        '[{{repository}}] Новый комментарий к {{#if is_pull_request}}pull request{{else}}задаче{{/if}} ' +
        '#{{number}}: {{title}}',
      body:
        '{{#if comment_excerpt}}{{#if comment_author}}{{comment_author}} пишет{{else}}Комментарий{{/if}}:\n' +
        '{{comment_excerpt}}' +
        '{{else}}{{#if comment_author}}{{comment_author}} оставил комментарий{{else}}Комментарий{{/if}} без ' +
        'текста.{{/if}}' +
        `{{#if comment_url}}\n\n{{comment_url}}{{else}}${link('issue_url')}{{/if}}`,
    },
    release_published: {
      title: '[{{repository}}] Опубликован {{#if prerelease}}предварительный {{/if}}релиз {{name}}',
      body:
        'Тег {{tag}}.{{#if author}} Опубликовал: ' +
        `{{author}}.{{/if}}{{#if notes_excerpt}}\n\n{{notes_excerpt}}{{/if}}${link('url')}`,
    },
    workflow_run_failed: {
      title:
        '[{{repository}}] Сбой workflow{{#if workflow}} {{workflow}}{{/if}}{{#if branch}} в ветке {{branch}}{{/if}}',
      body:
        'Запуск {{#if run_number}}№{{run_number}} {{/if}}{{#if run_title}}«{{run_title}}» {{/if}}завершился со ' +
        'статусом {{conclusion}}.' +
        '{{#if commit}}\nКоммит {{commit}}{{#if actor}}, инициатор: ' +
        '{{actor}}{{/if}}.{{else}}{{#if actor}}\nИнициатор: {{actor}}.{{/if}}{{/if}}' +
        link('url'),
    },
  },
};
