/**
 * Masking of secret config fields in API responses, and the reverse on update: a masked value
 * sent back means "keep what is stored". Paths come from the plugin schema (`Secret()` fields),
 * dot-separated, `[]` for every element of an array.
 */

/** What a stored secret looks like in a response. */
export const MASKED = '********';

type Seg = string | '[]';

function segments(path: string): Seg[] {
  const out: Seg[] = [];
  for (const part of path.split('.')) {
    const m = /^([^[\]]*)((?:\[\])*)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    if (m[1]) out.push(m[1]);
    for (let i = 0; i < m[2].length / 2; i++) out.push('[]');
  }
  return out;
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isSet = (v: unknown): boolean => v !== undefined && v !== null && v !== '';

/** Calls `fn(holder, key)` for every place in `value` that `path` names and that exists. */
function visit(
  value: unknown,
  segs: Seg[],
  fn: (holder: Record<string, unknown> | unknown[], key: string | number) => void,
): void {
  if (segs.length === 0) return;
  const [head, ...rest] = segs;
  if (head === '[]') {
    if (!Array.isArray(value)) return;
    value.forEach((item, i) => (rest.length ? visit(item, rest, fn) : fn(value, i)));
    return;
  }
  if (!isObj(value) || !(head in value)) return;
  if (rest.length) visit(value[head], rest, fn);
  else fn(value, head);
}

/** A copy of `config` with each secret value replaced by the mask, and the paths that hold one. */
export function maskSecrets(
  config: Record<string, unknown>,
  paths: string[],
): { config: Record<string, unknown>; secrets_set: string[] } {
  const copy = structuredClone(config);
  const set: string[] = [];
  for (const p of paths) {
    let found = false;
    visit(copy, segments(p), (holder, key) => {
      const h = holder as Record<string | number, unknown>;
      if (isSet(h[key])) {
        h[key] = MASKED;
        found = true;
      }
    });
    if (found) set.push(p);
  }
  return { config: copy, secrets_set: set };
}

/**
 * Puts the stored secret back wherever the incoming config carries the mask. Array elements are
 * matched by index. Returns the paths where a mask had nothing stored behind it (the caller refuses those).
 */
export function restoreMasked(
  incoming: Record<string, unknown>,
  stored: Record<string, unknown> | undefined,
  paths: string[],
): { config: Record<string, unknown>; unresolved: string[] } {
  const out = structuredClone(incoming);
  const unresolved: string[] = [];
  for (const p of paths) {
    const segs = segments(p);
    walkPair(out, stored, segs, p, unresolved);
  }
  return { config: out, unresolved };
}

function walkPair(cur: unknown, old: unknown, segs: Seg[], path: string, unresolved: string[]): void {
  const [head, ...rest] = segs;
  if (head === undefined) return;
  if (head === '[]') {
    if (!Array.isArray(cur)) return;
    cur.forEach((item, i) => {
      const prev = Array.isArray(old) ? old[i] : undefined;
      if (rest.length) walkPair(item, prev, rest, path, unresolved);
      else if (item === MASKED) {
        if (isSet(prev)) cur[i] = prev;
        else unresolved.push(path);
      }
    });
    return;
  }
  if (!isObj(cur) || !(head in cur)) return;
  const prev = isObj(old) ? old[head] : undefined;
  if (rest.length) {
    walkPair(cur[head], prev, rest, path, unresolved);
    return;
  }
  if (cur[head] === MASKED) {
    if (isSet(prev)) cur[head] = prev;
    else unresolved.push(path);
  }
}
