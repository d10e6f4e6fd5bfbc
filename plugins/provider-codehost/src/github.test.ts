import { createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import plugin from './index.ts';
import { delivery, fixture, only, SECRET } from './test-support.ts';

async function github(extra: Record<string, unknown> = {}) {
  const h = await createTestHost().provider(plugin, { host: 'github', webhook_secret: SECRET, ...extra });
  return (event: string, file: string) =>
    h.instance.handleWebhook!(delivery('github', event, fixture(`github/${file}`)));
}

const repo = { repository: 'octo-org/herald-demo', repository_url: 'https://github.com/octo-org/herald-demo' };

t.test('ping answers ok without events', async (t) => {
  const send = await github();
  t.match(await send('ping', 'ping'), {
    status: 200,
    body: { ok: true },
    events: [],
    replayKey: { key: /^delivery:/ },
  });
});

t.test('push lists commits with short ids, first lines, authors and the compare link', async (t) => {
  const p = only(await (await github())('push', 'push'), 'push');
  t.same(p, {
    ...repo,
    sender: 'monalisa',
    ref: 'refs/heads/main',
    branch: 'main',
    pusher: 'monalisa',
    commit_count: 2,
    forced: false,
    compare_url: 'https://github.com/octo-org/herald-demo/compare/1a2b3c4d5e6f...0a1b2c3d4e5f',
    commits: [
      {
        id: '9f8e7d6c5b4a39281706f5e4d3c2b1a098765432',
        short_id: '9f8e7d6',
        message: 'Add quiet hours to trackers',
        author: 'Mona Lisa',
        url: 'https://github.com/octo-org/herald-demo/commit/9f8e7d6c5b4a39281706f5e4d3c2b1a098765432',
      },
      {
        id: '0a1b2c3d4e5f60718293a4b5c6d7e8f901234567',
        short_id: '0a1b2c3',
        message: 'Fix typo in README',
        author: 'The Octocat',
        url: 'https://github.com/octo-org/herald-demo/commit/0a1b2c3d4e5f60718293a4b5c6d7e8f901234567',
      },
    ],
  });
});

t.test('branch deletions and tag pushes are ignored', async (t) => {
  const send = await github();
  const deleted = await send('push', 'push-branch-deleted');
  t.same(deleted.events, []);
  t.match(deleted.body, { ignored: true, reason: /deleted/ });
  const h = await createTestHost().provider(plugin, { host: 'github', webhook_secret: SECRET });
  const tag = JSON.parse(fixture('github/push'));
  tag.ref = 'refs/tags/v1.4.0';
  const res = await h.instance.handleWebhook!(delivery('github', 'push', JSON.stringify(tag)));
  t.match(res, { status: 200, body: { ignored: true }, events: [] });
});

t.test('pull requests: opened, merged, closed without merge, other actions ignored', async (t) => {
  const send = await github();
  const opened = only(await send('pull_request', 'pull_request-opened'), 'pull_request_opened');
  t.same(opened, {
    ...repo,
    sender: 'monalisa',
    number: 42,
    title: 'Add Russian templates',
    url: 'https://github.com/octo-org/herald-demo/pull/42',
    author: 'monalisa',
    source_branch: 'feature/ru-templates',
    target_branch: 'main',
    draft: false,
    excerpt: 'Adds ru templates for every event type.',
  });
  const merged = only(await send('pull_request', 'pull_request-merged'), 'pull_request_merged');
  t.equal(merged.merged_by, 'octocat');
  t.equal(merged.number, 42);
  const closed = only(await send('pull_request', 'pull_request-closed'), 'pull_request_closed');
  t.equal(closed.sender, 'octocat');
  t.notOk('merged_by' in closed);
  const sync = await send('pull_request', 'pull_request-synchronize');
  t.match(sync, { status: 200, body: { ignored: true }, events: [] });
});

t.test('issues and comments', async (t) => {
  const send = await github();
  const opened = only(await send('issues', 'issues-opened'), 'issue_opened');
  t.match(opened, {
    number: 7,
    title: 'Deferred notifications are lost after restart',
    author: 'octocat',
    labels: 'bug',
    url: 'https://github.com/octo-org/herald-demo/issues/7',
    excerpt: 'Steps to reproduce: ...',
  });
  const closed = only(await send('issues', 'issues-closed'), 'issue_closed');
  t.match(closed, { number: 7, sender: 'monalisa' });
  const comment = only(await send('issue_comment', 'issue_comment-created'), 'issue_comment');
  t.same(comment, {
    ...repo,
    sender: 'octocat',
    number: 42,
    title: 'Add Russian templates',
    issue_url: 'https://github.com/octo-org/herald-demo/pull/42',
    is_pull_request: true,
    comment_url: 'https://github.com/octo-org/herald-demo/pull/42#issuecomment-2570011223',
    comment_author: 'octocat',
    comment_excerpt: 'Looks good to me.\nOne nit: the Russian plural forms need a second look.',
  });
});

t.test('releases', async (t) => {
  const p = only(await (await github())('release', 'release-published'), 'release_published');
  t.match(p, {
    tag: 'v1.4.0',
    name: 'Herald 1.4.0',
    prerelease: false,
    author: 'octocat',
    url: 'https://github.com/octo-org/herald-demo/releases/tag/v1.4.0',
    notes_excerpt: "## What's changed\n* Russian templates",
  });
});

t.test('workflow runs: failures notify, successes do not', async (t) => {
  const send = await github();
  const p = only(await send('workflow_run', 'workflow_run-failure'), 'workflow_run_failed');
  t.same(p, {
    ...repo,
    sender: 'monalisa',
    workflow: 'CI',
    run_title: 'Fix typo in README',
    run_number: 318,
    conclusion: 'failure',
    branch: 'main',
    commit: '0a1b2c3',
    url: 'https://github.com/octo-org/herald-demo/actions/runs/12988776655',
    actor: 'monalisa',
  });
  t.match(await send('workflow_run', 'workflow_run-success'), { status: 200, body: { ignored: true }, events: [] });
  const h = await createTestHost().provider(plugin, { host: 'github', webhook_secret: SECRET });
  const timedOut = JSON.parse(fixture('github/workflow_run-failure'));
  timedOut.workflow_run.conclusion = 'timed_out';
  const res = await h.instance.handleWebhook!(delivery('github', 'workflow_run', JSON.stringify(timedOut)));
  t.equal(res.events[0]!.payload.conclusion, 'timed_out');
});

t.test('unhandled events are acknowledged and ignored', async (t) => {
  const h = await createTestHost().provider(plugin, { host: 'github', webhook_secret: SECRET });
  const res = await h.instance.handleWebhook!(
    delivery(
      'github',
      'star',
      JSON.stringify({ action: 'created', repository: { full_name: 'a/b' }, sender: { login: 'x' } }),
    ),
  );
  t.match(res, { status: 200, body: { ignored: true }, events: [] });
});
