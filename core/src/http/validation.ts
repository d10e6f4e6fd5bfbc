import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { type FieldError, keywordPhrase, plainParams } from './problem.ts';

/**
 * Bodies are validated strictly (no type coercion, unknown fields refused by the schemas);
 * query strings and params are coerced from their string form.
 */
function makeAjv(coerce: boolean) {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
  });
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
  let fn: (((data: unknown) => boolean) & { errors?: unknown }) | undefined;
  const validate = (data: unknown) => {
    fn ??= (httpPart === 'body' ? strict : coercing).compile(schema as object);
    const ok = fn(data);
    validate.errors = fn.errors;
    return ok;
  };
  validate.errors = undefined as unknown;
  return validate as any;
};

/** An Ajv error as Fastify hands it to the error handler. */
export interface AjvError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  message?: string;
}

const isUnion = (e: AjvError) => e.keyword === 'anyOf' || e.keyword === 'oneOf';
const inside = (e: AjvError, u: AjvError) => e.schemaPath.startsWith(`${u.schemaPath}/`);

/**
 * The errors a union (anyOf/oneOf) stands for. A branch that fails only because the value is of
 * another type or constant is another form the field may take; when exactly one branch fails on
 * more than that, its own errors say what is wrong (`quiet_hours.end is required`, not "matches no
 * form"). When none does, the field's accepted values or types are named (an enum of constants).
 */
function unionErrors(u: AjvError, all: AjvError[]): AjvError[] {
  const branches = new Map<string, AjvError[]>();
  for (const e of all.filter((x) => inside(x, u))) {
    const branch = e.schemaPath.slice(u.schemaPath.length + 1).split('/')[0]!;
    branches.set(branch, [...(branches.get(branch) ?? []), e]);
  }
  const shallow = (list: AjvError[]) =>
    list.every(
      (e) =>
        e.instancePath === u.instancePath && (e.keyword === 'type' || e.keyword === 'const' || e.keyword === 'enum'),
    );
  const deep = [...branches.values()].filter((list) => !shallow(list));
  if (deep.length === 1) return collapse(deep[0]!);
  if (deep.length === 0) {
    const failed = [...branches.values()].flat();
    const consts = failed.flatMap((e) =>
      e.keyword === 'const'
        ? [e.params.allowedValue]
        : e.keyword === 'enum'
          ? (e.params.allowedValues as unknown[])
          : [],
    );
    const types = failed.filter((e) => e.keyword === 'type').map((e) => String(e.params.type));
    if (!types.length && consts.every((v) => typeof v === 'string'))
      return [{ ...u, keyword: 'enum', params: { allowedValues: consts } }];
    if (!consts.length) return [{ ...u, keyword: 'type', params: { type: types.join(',') } }];
  }
  return [u];
}

/** Ajv's errors with each union reported once (see {@link unionErrors}). */
function collapse(errors: AjvError[]): AjvError[] {
  const unions = errors.filter(isUnion);
  return errors.flatMap((e) => {
    if (unions.some((u) => u !== e && inside(e, u))) return [];
    return isUnion(e) ? unionErrors(e, errors) : [e];
  });
}

/**
 * A request's schema errors as field errors: `path` like `body/config/url` (a missing or unknown
 * field named by its own path), the English `message` that follows the field's name, and the
 * keyword with its params as `code`/`params`.
 */
export function schemaFieldErrors(validation: AjvError[], context: string): FieldError[] {
  return collapse(validation).map((v) => {
    const named = v.params.additionalProperty ?? v.params.missingProperty;
    const params = plainParams(v.params);
    return {
      path: `${context}${v.instancePath || ''}${typeof named === 'string' ? `/${named}` : ''}`,
      message: keywordPhrase(v.keyword, v.params) ?? v.message ?? 'is invalid',
      code: v.keyword,
      params,
    };
  });
}
