/**
 * Secret fields inside JSON configs. Plugins name them as patterns (`a.b`, `items[].token`, from
 * `Secret()` in their schemas); a backup records the concrete places it left out as JSON pointers
 * (`/config/items/0/token`), so a restore knows exactly which values are missing.
 */

type Json = unknown;
const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isSet = (v: unknown): boolean => v !== undefined && v !== null && v !== '';

const escape = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');
const unescape = (s: string) => s.replaceAll('~1', '/').replaceAll('~0', '~');

/** Pattern `a.b[].c` as segments, `[]` standing for every element of an array. */
function segments(pattern: string): string[] {
  const out: string[] = [];
  for (const part of pattern.split('.')) {
    const m = /^([^[\]]*)((?:\[\])*)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    if (m[1]) out.push(m[1]);
    for (let i = 0; i < m[2]!.length / 2; i++) out.push('[]');
  }
  return out;
}

/** JSON pointers (under `prefix`) of every place in `value` that a pattern names and that holds a value. */
export function setSecretPointers(value: Json, patterns: string[], prefix = ''): string[] {
  const out = new Set<string>();
  const walk = (v: Json, segs: string[], at: string): void => {
    if (segs.length === 0) {
      if (isSet(v)) out.add(at);
      return;
    }
    const [head, ...rest] = segs;
    if (head === '[]') {
      if (Array.isArray(v)) v.forEach((item, i) => walk(item, rest, `${at}/${i}`));
      return;
    }
    if (isObj(v) && Object.hasOwn(v, head!)) walk(v[head!], rest, `${at}/${escape(head!)}`);
  };
  for (const p of patterns) walk(value, segments(p), prefix);
  return [...out];
}

function parts(pointer: string): string[] {
  return pointer === '' ? [] : pointer.slice(1).split('/').map(unescape);
}

/** The value at a pointer, or undefined. */
export function getAt(value: Json, pointer: string): unknown {
  let cur: unknown = value;
  for (const p of parts(pointer)) {
    if (Array.isArray(cur) && /^\d+$/.test(p)) cur = cur[Number(p)];
    else if (isObj(cur) && Object.hasOwn(cur, p)) cur = cur[p];
    else return undefined;
  }
  return cur;
}

/** Sets the value at a pointer, creating objects on the way; false when an array index is missing. */
export function setAt(value: Json, pointer: string, v: unknown): boolean {
  const ps = parts(pointer);
  let cur: unknown = value;
  for (let i = 0; i < ps.length - 1; i++) {
    const p = ps[i]!;
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(p) || Number(p) >= cur.length) return false;
      cur = cur[Number(p)];
      continue;
    }
    if (!isObj(cur)) return false;
    if (!isObj(cur[p]) && !Array.isArray(cur[p])) cur[p] = {};
    cur = cur[p];
  }
  const last = ps.at(-1);
  if (last === undefined) return false;
  if (Array.isArray(cur)) {
    if (!/^\d+$/.test(last) || Number(last) >= cur.length) return false;
    cur[Number(last)] = v;
    return true;
  }
  if (!isObj(cur)) return false;
  cur[last] = v;
  return true;
}

/** Removes the value at a pointer (array elements become null so indexes stay put). */
export function deleteAt(value: Json, pointer: string): void {
  const ps = parts(pointer);
  const last = ps.pop();
  if (last === undefined) return;
  const holder = getAt(value, ps.length ? `/${ps.map(escape).join('/')}` : '');
  if (Array.isArray(holder) && /^\d+$/.test(last)) holder[Number(last)] = null;
  else if (isObj(holder)) delete holder[last];
}

/** Whether a pointer has a value set. */
export const hasAt = (value: Json, pointer: string): boolean => isSet(getAt(value, pointer));

/** `/config/a/0/b` relative to `/config` → `/a/0/b`; undefined when it is not under the prefix. */
export function under(pointer: string, prefix: string): string | undefined {
  if (pointer === prefix) return '';
  return pointer.startsWith(`${prefix}/`) ? pointer.slice(prefix.length) : undefined;
}
