/** `pull_request` deliveries: opened, closed without merge, merged. */

import type { Obj, Outcome } from './common.ts';
import { base, emit, excerpt, ignore, int, login, obj, optObj, optStr, str } from './common.ts';

export function normalizePullRequest(body: Obj): Outcome {
  const action = str(body, 'action');
  const pr = obj(body, 'pull_request');
  const common = base(body);
  if (action !== 'opened' && action !== 'closed') return ignore(`pull_request action ${action}`);
  const fields = {
    ...common,
    number: typeof pr.number === 'number' ? int(pr, 'number', 'pull_request.number') : int(body, 'number'),
    title: str(pr, 'title', 'pull_request.title'),
    url: optStr(pr, 'html_url') ?? '',
    author: login(pr.user),
    source_branch: optStr(optObj(pr, 'head', 'pull_request.head'), 'ref') ?? '',
    target_branch: optStr(optObj(pr, 'base', 'pull_request.base'), 'ref') ?? '',
    draft: pr.draft === true,
  };
  if (action === 'opened') return emit('pull_request_opened', { ...fields, excerpt: excerpt(optStr(pr, 'body'), 300) });
  // GitHub and Gitea both report a merge as action "closed" with merged: true.
  if (pr.merged === true)
    return emit('pull_request_merged', { ...fields, merged_by: login(pr.merged_by) || common.sender });
  return emit('pull_request_closed', fields);
}
