/** `push` deliveries of GitHub, Gitea and Forgejo. */

import type { Obj, Outcome } from './common.ts';
import { base, clip, emit, firstLine, ignore, isObj, login, optStr, shortSha, str, unexpected } from './common.ts';

/** Commits listed in one event; the count carries the total. */
const MAX_COMMITS = 10;
const ZERO_SHA = /^0+$/;

/** True when `branch` matches one of the patterns; `*` matches any run of characters. */
export function branchMatches(branch: string, patterns: string[]): boolean {
  return patterns.some((p) => {
    const re = new RegExp(
      `^${p
        .split('*')
        .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
    return re.test(branch);
  });
}

function commit(c: unknown, i: number): { id: string; short_id: string; message: string; author: string; url: string } {
  if (!isObj(c)) unexpected(`commits[${i}]`, 'is not an object');
  const id = str(c, 'id', `commits[${i}].id`);
  const author = isObj(c.author) ? (optStr(c.author, 'name') ?? optStr(c.author, 'username') ?? '') : '';
  return {
    id,
    short_id: shortSha(id),
    message: firstLine(optStr(c, 'message') ?? ''),
    author: clip(author, 100),
    url: optStr(c, 'url') ?? '',
  };
}

export function normalizePush(body: Obj, branches: string[] | undefined): Outcome {
  const ref = str(body, 'ref');
  const common = base(body);
  if (!ref.startsWith('refs/heads/')) return ignore('not a branch push');
  const branch = ref.slice('refs/heads/'.length);
  if (body.deleted === true || ZERO_SHA.test(optStr(body, 'after') ?? '')) return ignore('branch deleted');
  if (branches?.length && !branchMatches(branch, branches)) return ignore('branch not in the configured branches');
  const list = body.commits ?? [];
  if (!Array.isArray(list)) unexpected('commits', 'is not an array');
  const commits = list.slice(0, MAX_COMMITS).map(commit);
  const total = typeof body.total_commits === 'number' ? Math.max(body.total_commits, list.length) : list.length;
  return emit('push', {
    ...common,
    ref,
    branch,
    pusher: login(body.pusher) || common.sender,
    commits,
    commit_count: total,
    compare_url: optStr(body, 'compare') ?? optStr(body, 'compare_url') ?? '',
    forced: body.forced === true,
  });
}
