import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Bodies are validated strictly (no type coercion, unknown fields refused by the schemas);
 * query strings and params are coerced from their string form.
 */
function makeAjv(coerce: boolean) {
  const ajv = new Ajv({ allErrors: true, coerceTypes: coerce ? 'array' : false, useDefaults: true, removeAdditional: false, strict: false });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

const strict = makeAjv(false);
const coercing = makeAjv(true);

/**
 * Compiles each route's validator on its first request rather than at boot: compiling every
 * schema of every route up front took a large share of the time to ready, mostly for routes a
 * given deployment rarely calls.
 */
export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  let fn: ((data: unknown) => boolean) & { errors?: unknown } | undefined;
  const validate = (data: unknown) => {
    fn ??= (httpPart === 'body' ? strict : coercing).compile(schema as object);
    const ok = fn(data);
    validate.errors = fn.errors;
    return ok;
  };
  validate.errors = undefined as unknown;
  return validate as any;
};
