/** `release` deliveries: published releases and pre-releases. */

import type { Obj, Outcome } from './common.ts';
import { base, emit, excerpt, ignore, login, obj, optStr, str } from './common.ts';

export function normalizeRelease(body: Obj): Outcome {
  const action = str(body, 'action');
  const release = obj(body, 'release');
  const common = base(body);
  if (action !== 'published') return ignore(`release action ${action}`);
  const tag = str(release, 'tag_name', 'release.tag_name');
  return emit('release_published', {
    ...common,
    tag,
    name: optStr(release, 'name') ?? tag,
    url: optStr(release, 'html_url') ?? '',
    prerelease: release.prerelease === true,
    author: login(release.author) || common.sender,
    notes_excerpt: excerpt(optStr(release, 'body'), 500),
  });
}
