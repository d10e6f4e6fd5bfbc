import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifySchema, RouteGenericInterface, RouteHandlerMethod, RouteShorthandOptions } from 'fastify';
import { Database } from '../db/database.ts';
import type { App } from '../http/server.ts';
import type { Logger } from '../logging/logger.ts';

type RouteOptions = Parameters<App['route']>[0];
// Typed by the route's schema, as `app.get`/`app.post` type theirs: the handler reads a typed body and query.
type Opts<S extends FastifySchema> = RouteShorthandOptions<
  any,
  any,
  any,
  RouteGenericInterface,
  unknown,
  S,
  TypeBoxTypeProvider,
  Logger
>;
type Handler<S extends FastifySchema> = RouteHandlerMethod<
  any,
  any,
  any,
  RouteGenericInterface,
  unknown,
  S,
  TypeBoxTypeProvider,
  Logger
>;

/**
 * Registers a collection route under both `/x` and `/x/`: the specification writes the
 * collection paths with a trailing slash (`/chats/`), clients often drop it, and the server
 * does not fold the two. Only the first appears in the OpenAPI document.
 */
export function collection<S extends FastifySchema>(
  app: App,
  method: 'GET' | 'POST',
  path: string,
  opts: Opts<S>,
  handler: Handler<S>,
): void {
  app.route({ method, url: path, ...opts, handler } as RouteOptions);
  app.route({
    method,
    url: `${path}/`,
    ...opts,
    schema: { ...(opts.schema ?? {}), hide: true },
    handler,
  } as RouteOptions);
}

/** Lower-cased search text and a LIKE pattern for it; `\` escapes the wildcards on both backends. */
export const searchable = (...parts: (string | null | undefined)[]): string =>
  parts.filter(Boolean).join('\n').toLowerCase();
export const likePattern = (q: string): string => `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export const bool = Database.bool;
/** A count or integer column as a number (PostgreSQL returns bigints as strings). */
export const int = (v: unknown): number => Number(v ?? 0);

/**
 * A rough token estimate (~4 characters per token), used for context budgeting and for usage the model did not report.
 */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);
