/**
 * Shared readers for GitHub, Gitea and Forgejo payloads. Required fields that are missing or of
 * the wrong type reject the delivery with 422 and a message naming the field.
 */

import type { EmittedEvent } from '@herald/plugin-api';
import { WebhookRejectedError } from '@herald/plugin-api';

export type Obj = Record<string, unknown>;

/** What a normalizer decided: events to emit, or a reason the delivery is ignored. */
export type Outcome = { events: EmittedEvent[] } | { ignored: string };

export const ignore = (reason: string): Outcome => ({ ignored: reason });
export const emit = (type: string, payload: Record<string, unknown>): Outcome => ({ events: [{ type, payload }] });

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function unexpected(path: string, what: string): never {
  throw new WebhookRejectedError(422, `unexpected payload: ${path} ${what}`);
}

/** A required object field. */
export function obj(parent: Obj, key: string, path = key): Obj {
  const v = parent[key];
  if (!isObj(v)) unexpected(path, v === undefined || v === null ? 'is missing' : 'is not an object');
  return v;
}

/** An optional object field; present but not an object is still an error. */
export function optObj(parent: Obj, key: string, path = key): Obj | undefined {
  const v = parent[key];
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) unexpected(path, 'is not an object');
  return v;
}

/** A required non-empty string field. */
export function str(parent: Obj, key: string, path = key): string {
  const v = parent[key];
  if (typeof v !== 'string' || v === '')
    unexpected(path, v === undefined || v === null ? 'is missing' : 'is not a non-empty string');
  return v;
}

/** An optional string field; other types read as absent. */
export function optStr(parent: Obj | undefined, key: string): string | undefined {
  const v = parent?.[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A required integer field (issue and pull request numbers). */
export function int(parent: Obj, key: string, path = key): number {
  const v = parent[key];
  if (typeof v !== 'number' || !Number.isInteger(v))
    unexpected(path, v === undefined || v === null ? 'is missing' : 'is not an integer');
  return v;
}

/** The display name of a user object of any of the three hosts. */
export function login(user: unknown): string {
  if (!isObj(user)) return '';
  return optStr(user, 'login') ?? optStr(user, 'username') ?? optStr(user, 'full_name') ?? optStr(user, 'name') ?? '';
}

/** First line of a text, trimmed and clipped. */
export function firstLine(text: string, max = 200): string {
  return clip(text.split(/\r?\n/, 1)[0]!.trim(), max);
}

/** A short excerpt of a longer text (issue bodies, comments, release notes). */
export function excerpt(text: string | undefined, max = 500): string {
  if (!text) return '';
  return clip(text.replace(/\r\n/g, '\n').trim(), max);
}

export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function shortSha(sha: string): string {
  return sha.slice(0, 7);
}

/**
 * The fields every code host event carries: repository full name and web URL, and the user
 * whose action caused the delivery. `repository` may come from elsewhere in the payload.
 */
export function base(
  body: Obj,
  repository: Obj = obj(body, 'repository'),
): { repository: string; repository_url: string; sender: string } {
  return {
    repository: str(repository, 'full_name', 'repository.full_name'),
    repository_url: optStr(repository, 'html_url') ?? '',
    sender: login(body.sender),
  };
}
