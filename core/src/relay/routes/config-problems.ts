/** The API's answer to a config that a plugin's own `validateConfig` hook refused. */
import { fieldSentences, HttpError } from '../../http/problem.ts';
import type { ConfigProblem } from '../../plugin-api/index.ts';

const SCHEMA_KEYWORDS = new Set([
  'required',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'type',
  'enum',
  'const',
  'minItems',
  'maxItems',
  'additionalProperties',
]);

/**
 * 422 with every problem under `errors` (paths placed by `at`, e.g. under `body/config`), the first
 * problem's code (default `validation_failed`) and its `detail`, or a sentence listing the problems.
 */
export function configRefused(what: string, problems: ConfigProblem[], at: (path: string) => string): HttpError {
  const list = problems.map((p) => ({
    path: at(p.path),
    message: p.message,
    ...(p.code ? { code: p.code } : {}),
    ...(p.params ? { params: p.params } : {}),
  }));
  const first = problems[0]!;
  const detail = first.detail ?? `The ${what} is invalid. ${fieldSentences(list)}`;
  // A JSON Schema keyword (`required`, `minLength`…) names the field's problem; the answer as a whole is then a
  // validation failure.
  const code = first.code && !SCHEMA_KEYWORDS.has(first.code) ? first.code : 'validation_failed';
  return new HttpError(422, code, detail, { errors: list });
}

/** `body/config/...` for a config-relative JSON pointer. */
export const underConfig = (path: string): string => `body/config${path === '/' ? '' : path}`;
