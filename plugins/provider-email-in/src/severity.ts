/** The optional severity rule: whole words of the subject pick critical, then warning, else info. */
import type { Severity } from '@herald/plugin-api';

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A matcher of any of `words` as a whole word (letters and digits of any script count as word characters). */
export function wordMatcher(words: readonly string[]): RegExp | null {
  const list = words.map((w) => w.trim()).filter(Boolean);
  if (!list.length) return null;
  return new RegExp(`(?:^|[^\\p{L}\\p{N}_])(?:${list.map(escape).join('|')})(?=$|[^\\p{L}\\p{N}_])`, 'iu');
}

export function severityRule(critical: readonly string[], warning: readonly string[]): (subject: string) => Severity {
  const c = wordMatcher(critical);
  const w = wordMatcher(warning);
  return (subject) => (c?.test(subject) ? 'critical' : w?.test(subject) ? 'warning' : 'info');
}
