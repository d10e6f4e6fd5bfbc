/** `issues` (opened, closed) and `issue_comment` (created) deliveries. */

import type { Obj, Outcome } from './common.ts';
import { base, emit, excerpt, ignore, int, isObj, login, obj, optStr, str } from './common.ts';

function labels(issue: Obj): string {
  if (!Array.isArray(issue.labels)) return '';
  return issue.labels
    .map((l) => (isObj(l) ? optStr(l, 'name') : undefined))
    .filter((n): n is string => !!n)
    .join(', ');
}

export function normalizeIssue(body: Obj): Outcome {
  const action = str(body, 'action');
  const issue = obj(body, 'issue');
  const common = base(body);
  if (action !== 'opened' && action !== 'closed') return ignore(`issues action ${action}`);
  const fields = {
    ...common,
    number: int(issue, 'number', 'issue.number'),
    title: str(issue, 'title', 'issue.title'),
    url: optStr(issue, 'html_url') ?? '',
    author: login(issue.user),
    labels: labels(issue),
  };
  if (action === 'opened') return emit('issue_opened', { ...fields, excerpt: excerpt(optStr(issue, 'body'), 300) });
  return emit('issue_closed', fields);
}

export function normalizeIssueComment(body: Obj): Outcome {
  const action = str(body, 'action');
  const issue = obj(body, 'issue');
  const comment = obj(body, 'comment');
  const common = base(body);
  if (action !== 'created') return ignore(`issue_comment action ${action}`);
  return emit('issue_comment', {
    ...common,
    number: int(issue, 'number', 'issue.number'),
    title: str(issue, 'title', 'issue.title'),
    issue_url: optStr(issue, 'html_url') ?? '',
    // GitHub marks pull request threads with issue.pull_request, Gitea also with is_pull.
    is_pull_request: isObj(issue.pull_request) || body.is_pull === true,
    comment_url: optStr(comment, 'html_url') ?? '',
    comment_author: login(comment.user) || common.sender,
    comment_excerpt: excerpt(optStr(comment, 'body'), 500),
  });
}
