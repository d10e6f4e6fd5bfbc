/**
 * Failed CI runs. GitHub and Gitea (1.24+) send `workflow_run` with action `completed` and a
 * `conclusion`; Forgejo (12+) sends its own `action_run` deliveries with action `failure`.
 */

import type { Obj, Outcome } from './common.ts';
import { base, emit, ignore, login, obj, optObj, optStr, shortSha, str } from './common.ts';

/** Conclusions that count as a failed run. */
export const FAILED_CONCLUSIONS: ReadonlySet<string> = new Set(['failure', 'timed_out', 'startup_failure']);

export function normalizeWorkflowRun(body: Obj): Outcome {
  const action = str(body, 'action');
  const run = obj(body, 'workflow_run');
  const common = base(body);
  if (action !== 'completed') return ignore(`workflow_run action ${action}`);
  const conclusion = optStr(run, 'conclusion') ?? '';
  if (!FAILED_CONCLUSIONS.has(conclusion)) return ignore(`workflow_run conclusion ${conclusion || 'none'}`);
  const workflow = optObj(body, 'workflow');
  return emit('workflow_run_failed', {
    ...common,
    workflow: optStr(workflow, 'name') ?? optStr(run, 'name') ?? optStr(run, 'path') ?? '',
    run_title: optStr(run, 'display_title') ?? optStr(run, 'name') ?? '',
    run_number: typeof run.run_number === 'number' ? run.run_number : 0,
    conclusion,
    branch: optStr(run, 'head_branch') ?? '',
    commit: shortSha(optStr(run, 'head_sha') ?? ''),
    url: optStr(run, 'html_url') ?? '',
    actor: login(run.actor) || login(run.triggering_actor) || common.sender,
  });
}

/** Forgejo `action_run` deliveries (event types action_run_failure, _recover, _success). */
export function normalizeForgejoActionRun(body: Obj, eventType: string | undefined): Outcome {
  const run = obj(body, 'run');
  const action = optStr(body, 'action') ?? eventType?.replace(/^action_run_/, '') ?? '';
  const common = base(body, optObj(body, 'repository') ?? obj(run, 'repository', 'run.repository'));
  if (action !== 'failure') return ignore(`action_run action ${action || 'none'}`);
  return emit('workflow_run_failed', {
    ...common,
    sender: common.sender || login(run.trigger_user),
    workflow: optStr(run, 'workflow_id') ?? '',
    run_title: optStr(run, 'title') ?? '',
    run_number: typeof run.index_in_repo === 'number' ? run.index_in_repo : 0,
    conclusion: optStr(run, 'status') ?? 'failure',
    branch: optStr(run, 'prettyref') ?? optStr(run, 'head_branch') ?? '',
    commit: shortSha(optStr(run, 'commit_sha') ?? optStr(run, 'head_sha') ?? ''),
    url: optStr(run, 'html_url') ?? '',
    actor: login(run.trigger_user) || common.sender,
  });
}
