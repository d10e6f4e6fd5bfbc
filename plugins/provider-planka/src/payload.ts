/**
 * Readers for Planka webhook bodies: `{ event, data: { item, included }, prevData?, user }`.
 * `included` carries the project, board and list (and for comments the card) of the item.
 */
import { WebhookRejectedError } from '@herald/plugin-api';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function unexpected(path: string, what: string): never {
  throw new WebhookRejectedError(422, `unexpected payload: ${path} ${what}`);
}

export function obj(parent: Obj, key: string, path = key): Obj {
  const v = parent[key];
  if (!isObj(v)) unexpected(path, v === undefined || v === null ? 'is missing' : 'is not an object');
  return v;
}

/** A required id: Planka ids are strings (64-bit snowflakes), numbers are accepted too. */
export function id(parent: Obj, key: string, path: string): string {
  const v = parent[key];
  if (typeof v === 'string' && v !== '') return v;
  if (typeof v === 'number') return String(v);
  return unexpected(path, v === undefined || v === null ? 'is missing' : 'is not an id');
}

export function optStr(parent: Obj | undefined, key: string): string | undefined {
  const v = parent?.[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A record of `included[kind]` by id, when Planka included it. */
export function included(data: Obj, kind: string, wanted: unknown): Obj | undefined {
  const inc = data.included;
  if (!isObj(inc) || !Array.isArray(inc[kind])) return undefined;
  return (inc[kind] as unknown[]).find(
    (r): r is Obj => isObj(r) && wanted !== undefined && String(r.id) === String(wanted),
  );
}

/** The first record of `included[kind]` (boards and projects come one at a time). */
export function firstIncluded(data: Obj, kind: string): Obj | undefined {
  const inc = data.included;
  if (!isObj(inc) || !Array.isArray(inc[kind])) return undefined;
  const r = (inc[kind] as unknown[])[0];
  return isObj(r) ? r : undefined;
}

/** Display name of a list; Planka's archive and trash lists have a type but no name. */
export function listName(list: Obj | undefined): string {
  return optStr(list, 'name') ?? optStr(list, 'type') ?? '';
}

export function userName(user: unknown): string {
  if (!isObj(user)) return '';
  return optStr(user, 'name') ?? optStr(user, 'username') ?? optStr(user, 'email') ?? '';
}

export function excerpt(text: string | undefined, max = 300): string {
  if (!text) return '';
  const t = text.replace(/\r\n/g, '\n').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}
