/**
 * MQTT topic filters as the specification defines them (MQTT 3.1.1 §4.7, the same in 5.0):
 * levels separated by `/`, `+` matches one whole level, `#` the rest of the topic and only as the
 * last level, no NUL character, 1 to 65,535 bytes of UTF-8.
 */

/** Longest topic the protocol can carry, in bytes of UTF-8. */
export const MAX_TOPIC_BYTES = 65_535;

/** Why `filter` is not a valid subscription filter, or null when it is. */
export function topicFilterProblem(filter: string): string | null {
  if (filter.length === 0) return 'is empty';
  if (Buffer.byteLength(filter, 'utf8') > MAX_TOPIC_BYTES) return `is longer than ${MAX_TOPIC_BYTES} bytes`;
  if (filter.includes('\u0000')) return 'contains a NUL character';
  const levels = filter.split('/');
  for (let i = 0; i < levels.length; i++) {
    const level = levels[i]!;
    if (level.includes('#') && (level !== '#' || i !== levels.length - 1))
      return '"#" must be a whole level and the last one (e.g. "home/#")';
    if (level.includes('+') && level !== '+') return '"+" must be a whole level (e.g. "home/+/temperature")';
  }
  return null;
}

/** True when the topic name `topic` matches the filter `filter` (both valid). */
export function topicMatches(filter: string, topic: string): boolean {
  // A topic starting with `$` (the broker's own, such as $SYS) is not matched by a leading wildcard.
  if (topic.startsWith('$') && (filter.startsWith('+') || filter.startsWith('#'))) return false;
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}
