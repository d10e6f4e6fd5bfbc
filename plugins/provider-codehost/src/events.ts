/** Event types of the code host provider and their payload schemas. */

import type { EventSpec } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';

/** Fields every code host payload carries. */
const Base = {
  /** `owner/name` */
  repository: Type.String(),
  repository_url: Type.String(),
  /** Login of the user whose action caused the delivery. */
  sender: Type.String(),
};

const Commit = Type.Object({
  id: Type.String(),
  short_id: Type.String(),
  message: Type.String(),
  author: Type.String(),
  url: Type.String(),
});

export const PushPayload = Type.Object({
  ...Base,
  ref: Type.String(),
  branch: Type.String(),
  pusher: Type.String(),
  /** At most ten commits, oldest first; `commit_count` is the total. */
  commits: Type.Array(Commit),
  commit_count: Type.Integer({ minimum: 0 }),
  compare_url: Type.String(),
  forced: Type.Boolean(),
});

const PullRequest = {
  ...Base,
  number: Type.Integer(),
  title: Type.String(),
  url: Type.String(),
  author: Type.String(),
  source_branch: Type.String(),
  target_branch: Type.String(),
  draft: Type.Boolean(),
};
export const PullRequestOpenedPayload = Type.Object({ ...PullRequest, excerpt: Type.String() });
export const PullRequestClosedPayload = Type.Object(PullRequest);
export const PullRequestMergedPayload = Type.Object({ ...PullRequest, merged_by: Type.String() });

const Issue = {
  ...Base,
  number: Type.Integer(),
  title: Type.String(),
  url: Type.String(),
  author: Type.String(),
  labels: Type.String(),
};
export const IssueOpenedPayload = Type.Object({ ...Issue, excerpt: Type.String() });
export const IssueClosedPayload = Type.Object(Issue);

export const IssueCommentPayload = Type.Object({
  ...Base,
  number: Type.Integer(),
  title: Type.String(),
  issue_url: Type.String(),
  is_pull_request: Type.Boolean(),
  comment_url: Type.String(),
  comment_author: Type.String(),
  comment_excerpt: Type.String(),
});

export const ReleasePublishedPayload = Type.Object({
  ...Base,
  tag: Type.String(),
  name: Type.String(),
  url: Type.String(),
  prerelease: Type.Boolean(),
  author: Type.String(),
  notes_excerpt: Type.String(),
});

export const WorkflowRunFailedPayload = Type.Object({
  ...Base,
  workflow: Type.String(),
  run_title: Type.String(),
  /** 0 when the host does not number runs. */
  run_number: Type.Integer({ minimum: 0 }),
  conclusion: Type.String(),
  branch: Type.String(),
  /** Short commit id. */
  commit: Type.String(),
  url: Type.String(),
  actor: Type.String(),
});

const info = (
  payload: EventSpec['payload'],
  description: string,
  example: Record<string, unknown>,
  correlation?: EventSpec['correlation'],
): EventSpec => ({
  payload,
  quietHours: 'defer',
  severity: 'info',
  description,
  example,
  ...(correlation ? { correlation } : {}),
});

/**
 * A pull request's life (opened, then merged or closed) is one message per repository and number, edited as it changes.
 */
const PULL_REQUEST = { key: ['repository', 'number'], thread: 'pull_request' };

/** Sample payloads for "send a test event". */
const REPO = { repository: 'acme/web', repository_url: 'https://git.example.net/acme/web', sender: 'alice' };
const PR = {
  ...REPO,
  number: 42,
  title: 'Add dark mode',
  url: 'https://git.example.net/acme/web/pulls/42',
  author: 'alice',
  source_branch: 'dark-mode',
  target_branch: 'main',
  draft: false,
};
const ISSUE = {
  ...REPO,
  number: 17,
  title: 'Login page is slow',
  url: 'https://git.example.net/acme/web/issues/17',
  author: 'bob',
  labels: 'bug, performance',
};

export const events: Record<string, EventSpec> = {
  push: info(PushPayload, 'Commits were pushed to a branch', {
    ...REPO,
    ref: 'refs/heads/main',
    branch: 'main',
    pusher: 'alice',
    commits: [
      {
        id: '9f2c1e4b7a0d3c5e8f1a2b3c4d5e6f7a8b9c0d1e',
        short_id: '9f2c1e4',
        message: 'Fix the login redirect',
        author: 'alice',
        url: 'https://git.example.net/acme/web/commit/9f2c1e4b7a0d3c5e8f1a2b3c4d5e6f7a8b9c0d1e',
      },
    ],
    commit_count: 1,
    compare_url: 'https://git.example.net/acme/web/compare/1a2b3c4...9f2c1e4',
    forced: false,
  }),
  pull_request_opened: info(
    PullRequestOpenedPayload,
    'A pull request was opened',
    { ...PR, excerpt: 'Adds a dark colour scheme that follows the system setting.' },
    PULL_REQUEST,
  ),
  pull_request_closed: info(PullRequestClosedPayload, 'A pull request was closed without merging', PR, PULL_REQUEST),
  pull_request_merged: info(
    PullRequestMergedPayload,
    'A pull request was merged',
    { ...PR, merged_by: 'bob' },
    PULL_REQUEST,
  ),
  issue_opened: info(IssueOpenedPayload, 'An issue was opened', {
    ...ISSUE,
    excerpt: 'The login page takes ten seconds to load on a slow connection.',
  }),
  issue_closed: info(IssueClosedPayload, 'An issue was closed', ISSUE),
  issue_comment: info(IssueCommentPayload, 'Someone commented on an issue or pull request', {
    ...REPO,
    number: 17,
    title: 'Login page is slow',
    issue_url: 'https://git.example.net/acme/web/issues/17',
    is_pull_request: false,
    comment_url: 'https://git.example.net/acme/web/issues/17#issuecomment-1',
    comment_author: 'carol',
    comment_excerpt: 'I can reproduce this on a phone.',
  }),
  release_published: info(ReleasePublishedPayload, 'A release or pre-release was published', {
    ...REPO,
    tag: 'v1.4.0',
    name: 'Version 1.4.0',
    url: 'https://git.example.net/acme/web/releases/tag/v1.4.0',
    prerelease: false,
    author: 'alice',
    notes_excerpt: 'Dark mode, faster login.',
  }),
  workflow_run_failed: {
    payload: WorkflowRunFailedPayload,
    quietHours: 'defer',
    severity: 'warning',
    description: 'A CI workflow run failed or timed out',
    // One message per run (its URL names the run id): a re-run that fails again edits it.
    correlation: { key: ['repository', 'url'] },
    example: {
      ...REPO,
      workflow: 'CI',
      run_title: 'Fix the login redirect',
      run_number: 312,
      conclusion: 'failure',
      branch: 'main',
      commit: '9f2c1e4',
      url: 'https://git.example.net/acme/web/actions/runs/312',
      actor: 'alice',
    },
  },
};
