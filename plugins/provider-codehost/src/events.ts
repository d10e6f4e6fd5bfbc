/** Event types of the code host provider and their payload schemas. */
import { Type } from '@herald/plugin-api';
import type { EventSpec } from '@herald/plugin-api';

/** Fields every code host payload carries. */
const Base = {
  /** `owner/name` */
  repository: Type.String(),
  repository_url: Type.String(),
  /** Login of the user whose action caused the delivery. */
  sender: Type.String(),
};

const Commit = Type.Object({ id: Type.String(), short_id: Type.String(), message: Type.String(), author: Type.String(), url: Type.String() });

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

const Issue = { ...Base, number: Type.Integer(), title: Type.String(), url: Type.String(), author: Type.String(), labels: Type.String() };
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

const info = (payload: EventSpec['payload'], description: string): EventSpec => ({ payload, quietHours: 'defer', severity: 'info', description });

export const events: Record<string, EventSpec> = {
  push: info(PushPayload, 'Commits were pushed to a branch'),
  pull_request_opened: info(PullRequestOpenedPayload, 'A pull request was opened'),
  pull_request_closed: info(PullRequestClosedPayload, 'A pull request was closed without merging'),
  pull_request_merged: info(PullRequestMergedPayload, 'A pull request was merged'),
  issue_opened: info(IssueOpenedPayload, 'An issue was opened'),
  issue_closed: info(IssueClosedPayload, 'An issue was closed'),
  issue_comment: info(IssueCommentPayload, 'Someone commented on an issue or pull request'),
  release_published: info(ReleasePublishedPayload, 'A release or pre-release was published'),
  workflow_run_failed: { payload: WorkflowRunFailedPayload, quietHours: 'defer', severity: 'warning', description: 'A CI workflow run failed or timed out' },
};
