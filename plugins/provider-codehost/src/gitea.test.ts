import { createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import type { Host } from './config.ts';
import plugin from './index.ts';
import { delivery, fixture, only, SECRET } from './test-support.ts';

async function sender(host: Host, extra: Record<string, unknown> = {}) {
  const h = await createTestHost().provider(plugin, { host, webhook_secret: SECRET, ...extra });
  return (event: string, file: string, eventType?: string) =>
    h.instance.handleWebhook!(delivery(host, event, fixture(`${host}/${file}`), { eventType }));
}

const repo = { repository: 'homelab/infra', repository_url: 'https://git.example.net/homelab/infra' };

t.test('gitea push', async (t) => {
  const p = only(await (await sender('gitea'))('push', 'push'), 'push');
  t.same(p, {
    ...repo,
    sender: 'anna',
    ref: 'refs/heads/main',
    branch: 'main',
    pusher: 'anna',
    commit_count: 2,
    forced: false,
    compare_url:
      'https://git.example.net/homelab/infra/compare/' +
      'a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5...c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7',
    commits: [
      {
        id: 'b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6',
        short_id: 'b7c8d9e',
        message: 'Pin the NUT driver version',
        author: 'Anna Petrova',
        url: 'https://git.example.net/homelab/infra/commit/b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6',
      },
      {
        id: 'c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7',
        short_id: 'c8d9e0f',
        message: 'Rotate backup keys',
        author: 'Ivan Sidorov',
        url: 'https://git.example.net/homelab/infra/commit/c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7',
      },
    ],
  });
});

t.test('gitea branch filter', async (t) => {
  const send = await sender('gitea', { branches: ['main', 'release/*'] });
  t.equal((await send('push', 'push')).events.length, 1, 'main passes');
  const develop = await send('push', 'push-develop');
  t.match(develop, { status: 200, body: { ignored: true, reason: /branch/ }, events: [] });
  const h = await createTestHost().provider(plugin, { host: 'gitea', webhook_secret: SECRET, branches: ['release/*'] });
  const rel = JSON.parse(fixture('gitea/push'));
  rel.ref = 'refs/heads/release/2026.1';
  const res = await h.instance.handleWebhook!(delivery('gitea', 'push', JSON.stringify(rel)));
  t.equal(res.events[0]!.payload.branch, 'release/2026.1', 'a glob matches');
  const none = await sender('gitea', { branches: [] });
  t.equal((await none('push', 'push-develop')).events.length, 1, 'an empty list filters nothing');
});

t.test('gitea pull requests', async (t) => {
  const send = await sender('gitea');
  const opened = only(await send('pull_request', 'pull_request-opened'), 'pull_request_opened');
  t.same(opened, {
    ...repo,
    sender: 'ivan',
    number: 12,
    title: 'Move backups to restic',
    url: 'https://git.example.net/homelab/infra/pulls/12',
    author: 'ivan',
    source_branch: 'restic',
    target_branch: 'main',
    draft: false,
    excerpt: 'Replaces the rsync job.',
  });
  const merged = only(await send('pull_request', 'pull_request-merged'), 'pull_request_merged');
  t.match(merged, { number: 12, merged_by: 'anna', sender: 'anna' });
});

t.test('gitea issues and comments', async (t) => {
  const send = await sender('gitea');
  t.match(only(await send('issues', 'issues-opened'), 'issue_opened'), {
    number: 9,
    title: 'UPS shutdown script does not run',
    author: 'anna',
    labels: '',
    url: 'https://git.example.net/homelab/infra/issues/9',
  });
  t.match(only(await send('issues', 'issues-closed'), 'issue_closed'), { number: 9, sender: 'ivan' });
  const c = only(await send('issue_comment', 'issue_comment-created'), 'issue_comment');
  t.match(c, {
    number: 9,
    is_pull_request: false,
    comment_author: 'ivan',
    comment_excerpt: 'The script runs as nut, which cannot call poweroff.',
    comment_url: 'https://git.example.net/homelab/infra/issues/9#issuecomment-512',
  });
});

t.test('gitea comment on a pull request is flagged by is_pull', async (t) => {
  const h = await createTestHost().provider(plugin, { host: 'gitea', webhook_secret: SECRET });
  const body = JSON.parse(fixture('gitea/issue_comment-created'));
  body.is_pull = true;
  const res = await h.instance.handleWebhook!(
    delivery('gitea', 'issue_comment', JSON.stringify(body), { eventType: 'pull_request_comment' }),
  );
  t.equal(res.events[0]!.payload.is_pull_request, true);
});

t.test('gitea releases and failed workflow runs', async (t) => {
  const send = await sender('gitea');
  t.match(only(await send('release', 'release-published'), 'release_published'), {
    tag: 'v2026.1',
    name: 'January maintenance',
    prerelease: true,
    author: 'anna',
  });
  const run = only(await send('workflow_run', 'workflow_run-failure'), 'workflow_run_failed');
  t.same(run, {
    ...repo,
    sender: 'anna',
    workflow: 'Lint',
    run_title: 'Rotate backup keys',
    run_number: 77,
    conclusion: 'failure',
    branch: 'main',
    commit: 'c8d9e0f',
    url: 'https://git.example.net/homelab/infra/actions/runs/77',
    actor: 'anna',
  });
});

t.test('forgejo push and failed action runs', async (t) => {
  const send = await sender('forgejo');
  const push = only(await send('push', 'push'), 'push');
  t.match(push, {
    repository: 'homelab/infra',
    repository_url: 'https://code.example.org/homelab/infra',
    branch: 'main',
    commit_count: 1,
  });
  const run = only(await send('action_run_failure', 'action_run-failure'), 'workflow_run_failed');
  t.same(run, {
    repository: 'homelab/infra',
    repository_url: 'https://code.example.org/homelab/infra',
    sender: 'anna',
    workflow: 'deploy.yml',
    run_title: 'Update Caddyfile',
    run_number: 58,
    conclusion: 'failure',
    branch: 'main',
    commit: 'f1a2b3c',
    url: 'https://code.example.org/homelab/infra/actions/runs/58',
    actor: 'anna',
  });
  t.match(
    await send('action_run_recover', 'action_run-recover'),
    { status: 200, body: { ignored: true }, events: [] },
    'recoveries are not failures',
  );
});

t.test('forgejo action run without top-level repository uses the run repository', async (t) => {
  const h = await createTestHost().provider(plugin, { host: 'forgejo', webhook_secret: SECRET });
  const body = JSON.parse(fixture('forgejo/action_run-failure'));
  delete body.repository;
  delete body.sender;
  const res = await h.instance.handleWebhook!(
    delivery('forgejo', 'action_run', JSON.stringify(body), { eventType: 'action_run_failure' }),
  );
  t.match(res.events[0]!.payload, { repository: 'homelab/infra', sender: 'anna', actor: 'anna' });
});
