import type { TSchema } from 'typebox';
import Type from 'typebox';
import { TITLES } from './problem.ts';

/** Shared TypeBox pieces for route schemas. */

const ProblemParams = Type.Record(
  Type.String(),
  Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Array(Type.String())]),
  {
    description:
      'The values of the message (names, limits, counts), so that a client can word `code` in its own language.',
  },
);

/**
 * RFC 9457 problem details: every error answer of the API. Registered once (`$id` `Problem`) and
 * referenced by every operation's error responses.
 */
export const Problem = Type.Object(
  {
    type: Type.String({ description: 'Always `about:blank`: `code` names the problem.' }),
    title: Type.String({ description: 'The HTTP status phrase.' }),
    status: Type.Integer(),
    detail: Type.String({ description: 'What went wrong, in English sentences.' }),
    code: Type.String({
      description: 'A stable, documented code (`validation_failed`, `not_found`, `email_taken`…).',
    }),
    params: Type.Optional(ProblemParams),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          path: Type.String({ description: 'Where: `body/config/url`, `querystring/limit`.' }),
          message: Type.String({ description: "The field's problem in English, to follow its name (`is required`)." }),
          code: Type.Optional(
            Type.String({ description: 'The JSON Schema keyword (`minLength`, `enum`…) or a Herald code.' }),
          ),
          params: Type.Optional(ProblemParams),
        }),
        { description: 'One entry per field with a problem (validation failures).' },
      ),
    ),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details.' },
);

/** The media type of every error answer. */
export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/** One error answer of an operation: problem details, with what the status means on this route. */
export function problemResponse(status: number, description = TITLES[status] ?? 'Error') {
  return { description, content: { [PROBLEM_MEDIA_TYPE]: { schema: { $ref: 'Problem#' } } } };
}

/**
 * Error answers a route gives beyond the common ones (which the server adds to every route from its
 * schema and guards: see `documentErrors`): a status, or a status with what it means here.
 */
export function errors(...list: (number | [number, string])[]): Record<number, ReturnType<typeof problemResponse>> {
  return Object.fromEntries(
    list.map((e) => (typeof e === 'number' ? [e, problemResponse(e)] : [e[0], problemResponse(e[0], e[1])])),
  );
}

/**
 * A success answer. With a `schema`, the body is serialized by it (fields it does not name are
 * left out), so give one only where it names everything the handler returns; without one, any JSON.
 */
const answer = <T extends TSchema>(description: string, schema?: T): T =>
  ({ ...(schema ?? {}), description }) as unknown as T;
export const ok = <T extends TSchema = TSchema>(description: string, schema?: T) => ({
  200: answer(description, schema),
});
export const created = <T extends TSchema = TSchema>(description: string, schema?: T) => ({
  201: answer(description, schema),
});
export const accepted = <T extends TSchema = TSchema>(description: string, schema?: T) => ({
  202: answer(description, schema),
});
/** An answer without a body. */
export const noContent = (description = 'Done; there is nothing to answer.') => ({
  204: { type: 'null', description } as unknown as TSchema,
});
/** A 200 answer whose body is a file or text of `mediaType` rather than JSON. */
export const file = (description: string, mediaType: string) => ({
  200: {
    description,
    content: { [mediaType]: { schema: { type: 'string', format: 'binary' } } },
  } as unknown as TSchema,
});

export const Uuid = Type.String({ format: 'uuid' });
export const IdParams = Type.Object({ id: Uuid });
export const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(Uuid),
});
export const IsoTime = Type.String({ format: 'date-time' });
export const Locale = Type.Union([Type.Literal('en'), Type.Literal('ru')]);
