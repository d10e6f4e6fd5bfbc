/** What the health routes answer (routes.ts), for their response schemas and the web client's types. */
import Type, { type Static } from 'typebox';

/** `GET /api/health`. */
export const Health = Type.Object({ status: Type.Literal('ok'), version: Type.String() });
export type Health = Static<typeof Health>;

/** `GET /api/ready`, with 200 or 503 alike. */
export const Ready = Type.Object({
  ready: Type.Boolean(),
  /** Each check by name (`db`, `scheduler`, `start`, `ha`, and the plugins' own): `ok`, `fail` or `na`. */
  checks: Type.Record(Type.String(), Type.String(), {
    description: "Each check by name (`db`, `scheduler`, `start`, `ha`, the plugins' own): `ok`, `fail` or `na`",
  }),
  errors: Type.Array(Type.String(), { description: 'What failed, one sentence per failed check' }),
  version: Type.String(),
  replica: Type.Object({ id: Type.String(), scheduler_leader: Type.Boolean() }),
});
export type Ready = Static<typeof Ready>;
