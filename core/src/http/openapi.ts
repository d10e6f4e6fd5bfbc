/**
 * The OpenAPI side of the routes: the error answers every route shares, added to its `response`
 * from its schema and guards, and the serializer that turns response schemas into functions.
 */
import { createRequire } from 'node:module';
import { guardRoles } from '../auth/guard.ts';
import { problemResponse } from './schemas.ts';

/** What each common error status means, on every route it applies to. */
const COMMON: Record<number, string> = {
  400: 'The body is not valid JSON, is empty where JSON was announced, or is nested too deeply.',
  401: 'Not signed in: the bearer token or session cookie is missing, invalid, expired, or was revoked.',
  403: 'The caller is not an administrator.',
  404: "Nothing with this id is yours (another user's is not found either), or a path value is malformed.",
  413: 'The request body is larger than this endpoint accepts.',
  415: 'The content type of the body is not accepted here.',
  422: 'The request does not pass validation; `errors` names each field with its problem.',
  500: "Something went wrong on the service's side; the error was logged.",
};

interface RouteLike {
  method: string | string[];
  url: string;
  schema?: Record<string, unknown> & { response?: Record<string, unknown>; hide?: boolean };
  preHandler?: unknown;
  onRequest?: unknown;
}

/**
 * An `onRoute` hook: adds to the route's `response` the error answers it can give by its shape
 * (problem details): 400, 413 and 415 where a body is read, 401 behind a guard and 403 behind an
 * administrator's guard, 404 where the path has values, 422 where a body or query string is
 * validated, and 500 everywhere. What the route declares itself (its success status, its own
 * errors and what they mean there) is kept. Runs after `guardsFirst` (guards may sit in either hook list).
 */
export function documentErrors(route: RouteLike): void {
  const schema = route.schema ?? {};
  if (schema.hide) return;
  const methods = [route.method].flat().map((m) => m.toUpperCase());
  const statuses: number[] = [500];
  if (methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH') || schema.body !== undefined) {
    statuses.push(400, 413);
    // A route that reads any content type (`consumes: ['*/*']`) refuses none.
    if (!(Array.isArray(schema.consumes) && schema.consumes.includes('*/*'))) statuses.push(415);
  }
  const roles = guardRoles(route);
  if (roles.size) statuses.push(401);
  if (roles.has('admin')) statuses.push(403);
  if (route.url.includes(':') || schema.params !== undefined) statuses.push(404);
  if (schema.body !== undefined || schema.querystring !== undefined) statuses.push(422);
  const response: Record<string, unknown> = { ...(schema.response ?? {}) };
  for (const s of statuses.sort()) response[s] ??= problemResponse(s, COMMON[s]);
  // A new schema object: routes may share one, and each gets the errors of its own shape.
  route.schema = { ...schema, response };
}

type Serialize = (data: unknown) => string;
type SerializerCompiler = (route: {
  schema?: unknown;
  method: string;
  url: string;
  httpStatus: string;
  contentType?: string;
}) => Serialize;

// The serializer compiler Fastify itself uses, loaded from Fastify's own dependencies.
const defaultSerializers = createRequire(import.meta.resolve('fastify'))(
  '@fastify/fast-json-stringify-compiler',
) as () => (externalSchemas: unknown, options: unknown) => SerializerCompiler;

const SHAPING = [
  'type',
  'properties',
  'items',
  'additionalProperties',
  'patternProperties',
  'anyOf',
  'oneOf',
  'allOf',
  'const',
  'enum',
  'required',
];

/**
 * A schema that passes any JSON through unchanged: problem details (our own bodies) and success answers without a body
 * schema.
 */
function passesThrough(schema: unknown): boolean {
  if (!schema || typeof schema !== 'object') return true;
  const s = schema as Record<string, unknown>;
  if (s.$ref === 'Problem#' || s.$ref === 'Problem') return true;
  return !('$ref' in s) && !SHAPING.some((k) => k in s);
}

/**
 * The server's `compilersFactory.buildSerializer`: Fastify's own serializer for response schemas
 * that shape the body, compiled on a route's first answer with that status rather than at boot
 * (a route lists up to nine answers; compiling all of them made the service ready half a second
 * later), and plain `JSON.stringify` for problem details and schemas that shape nothing.
 */
export function buildSerializer(externalSchemas: unknown, options: unknown): SerializerCompiler {
  const compile = defaultSerializers()(externalSchemas, options);
  return (route) => {
    if (passesThrough(route.schema)) return JSON.stringify;
    let fn: Serialize | undefined;
    return (data) => (fn ??= compile(route))(data);
  };
}
