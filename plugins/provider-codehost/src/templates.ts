/** Default English and Russian templates for every code host event type. */
import type { TemplateSet } from '@herald/plugin-api';

const commitList = '{{#each commits}}\n• {{short_id}} {{message}} — {{author}}{{/each}}';

export const templates: TemplateSet = {
  en: {
    push: {
      title: 'New commits in {{repository}}:{{branch}}',
      body: `{{#if forced}}Force-push.\n{{/if}}Pushed by {{pusher}}\nCommits: {{commit_count}}${commitList}{{#if compare_url}}\n\nCompare: {{compare_url}}{{/if}}`,
    },
    pull_request_opened: {
      title: '[{{repository}}] Pull request #{{number}} opened: {{title}}',
      body: '{{#if draft}}Draft. {{/if}}{{author}} wants to merge {{source_branch}} into {{target_branch}}.{{#if excerpt}}\n\n{{excerpt}}{{/if}}\n\n{{url}}',
    },
    pull_request_closed: {
      title: '[{{repository}}] Pull request #{{number}} closed: {{title}}',
      body: 'Closed without merging by {{sender}}.\n\n{{url}}',
    },
    pull_request_merged: {
      title: '[{{repository}}] Pull request #{{number}} merged: {{title}}',
      body: '{{merged_by}} merged {{source_branch}} into {{target_branch}}.\n\n{{url}}',
    },
    issue_opened: {
      title: '[{{repository}}] Issue #{{number}} opened: {{title}}',
      body: 'Opened by {{author}}.{{#if labels}} Labels: {{labels}}.{{/if}}{{#if excerpt}}\n\n{{excerpt}}{{/if}}\n\n{{url}}',
    },
    issue_closed: {
      title: '[{{repository}}] Issue #{{number}} closed: {{title}}',
      body: 'Closed by {{sender}}.\n\n{{url}}',
    },
    issue_comment: {
      title: '[{{repository}}] New comment on {{#if is_pull_request}}pull request{{else}}issue{{/if}} #{{number}}: {{title}}',
      body: '{{comment_author}} wrote:\n{{comment_excerpt}}\n\n{{comment_url}}',
    },
    release_published: {
      title: '[{{repository}}] {{#if prerelease}}Pre-release{{else}}Release{{/if}} {{name}} published',
      body: 'Tag {{tag}}, published by {{author}}.{{#if notes_excerpt}}\n\n{{notes_excerpt}}{{/if}}\n\n{{url}}',
    },
    workflow_run_failed: {
      title: '[{{repository}}] Workflow {{workflow}} failed on {{branch}}',
      body: 'Run {{#if run_number}}#{{run_number}} {{/if}}"{{run_title}}" finished with {{conclusion}}.\nCommit {{commit}}{{#if actor}}, started by {{actor}}{{/if}}.\n\n{{url}}',
    },
  },
  ru: {
    push: {
      title: 'Новые коммиты в {{repository}}:{{branch}}',
      body: `{{#if forced}}Принудительная отправка (force-push).\n{{/if}}Отправил: {{pusher}}\nКоммитов: {{commit_count}}${commitList}{{#if compare_url}}\n\nСравнение: {{compare_url}}{{/if}}`,
    },
    pull_request_opened: {
      title: '[{{repository}}] Открыт pull request #{{number}}: {{title}}',
      body: '{{#if draft}}Черновик. {{/if}}{{author}} предлагает влить {{source_branch}} в {{target_branch}}.{{#if excerpt}}\n\n{{excerpt}}{{/if}}\n\n{{url}}',
    },
    pull_request_closed: {
      title: '[{{repository}}] Pull request #{{number}} закрыт: {{title}}',
      body: 'Закрыт без слияния. Закрыл: {{sender}}.\n\n{{url}}',
    },
    pull_request_merged: {
      title: '[{{repository}}] Pull request #{{number}} влит: {{title}}',
      body: 'Ветка {{source_branch}} влита в {{target_branch}}. Выполнил слияние: {{merged_by}}.\n\n{{url}}',
    },
    issue_opened: {
      title: '[{{repository}}] Открыта задача #{{number}}: {{title}}',
      body: 'Автор: {{author}}.{{#if labels}} Метки: {{labels}}.{{/if}}{{#if excerpt}}\n\n{{excerpt}}{{/if}}\n\n{{url}}',
    },
    issue_closed: {
      title: '[{{repository}}] Закрыта задача #{{number}}: {{title}}',
      body: 'Закрыл: {{sender}}.\n\n{{url}}',
    },
    issue_comment: {
      title: '[{{repository}}] Новый комментарий к {{#if is_pull_request}}pull request{{else}}задаче{{/if}} #{{number}}: {{title}}',
      body: '{{comment_author}} пишет:\n{{comment_excerpt}}\n\n{{comment_url}}',
    },
    release_published: {
      title: '[{{repository}}] Опубликован {{#if prerelease}}предварительный {{/if}}релиз {{name}}',
      body: 'Тег {{tag}}. Опубликовал: {{author}}.{{#if notes_excerpt}}\n\n{{notes_excerpt}}{{/if}}\n\n{{url}}',
    },
    workflow_run_failed: {
      title: '[{{repository}}] Сбой workflow {{workflow}} в ветке {{branch}}',
      body: 'Запуск {{#if run_number}}№{{run_number}} {{/if}}«{{run_title}}» завершился со статусом {{conclusion}}.\nКоммит {{commit}}{{#if actor}}, инициатор: {{actor}}{{/if}}.\n\n{{url}}',
    },
  },
};
