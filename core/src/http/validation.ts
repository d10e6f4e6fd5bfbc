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

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? strict : coercing).compile(schema as object) as any;
