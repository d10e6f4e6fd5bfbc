/** Configuration of a generic HTTP target: one endpoint, its method, headers, content type and body template. */

import type { ConfigProblem, Static } from '@herald/plugin-api';
import { Secret, Type } from '@herald/plugin-api';
import { compile, jsonTemplateProblem } from './template.ts';

/** RFC 9110 token characters: what a header name may hold. */
export const HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$";
export const MAX_TEMPLATE_LENGTH = 16_000;

/**
 * Headers Herald sets itself or the HTTP client owns: a configured one would clash with them.
 * `content-type` follows `content_type`; `idempotency-key` carries the delivery id.
 */
export const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
  'content-type',
  'idempotency-key',
]);

export const configSchema = Type.Object({
  // The URL is a secret: endpoints often carry their credential in the path or query (a webhook id, ?token=).
  url: Secret({
    pattern: '^https?://',
    maxLength: 2048,
    description: 'Address the notification is sent to, e.g. https://hooks.example.net/herald (kept secret)',
  }),
  method: Type.Union([Type.Literal('POST'), Type.Literal('PUT'), Type.Literal('PATCH')], {
    default: 'POST',
    description: 'HTTP method of the request',
  }),
  content_type: Type.Union([Type.Literal('json'), Type.Literal('form'), Type.Literal('text')], {
    default: 'json',
    description: 'How the body is encoded',
  }),
  // Plain headers are a map, which the web form edits as rows. A map's values cannot be Secret()
  // (secretPaths() walks properties and array items only), and an array of {name, value: Secret()}
  // would be restored by position when a masked list comes back edited (a removed row would hand its
  // secret to the next header), so the credential has a field pair of its own.
  headers: Type.Optional(
    Type.Record(Type.String(), Type.String({ maxLength: 4096 }), {
      description:
        'Extra request headers, name and value (not secret: put a credential in the credential header below)',
    }),
  ),
  auth_header: Type.String({
    default: 'Authorization',
    pattern: HEADER_NAME_PATTERN,
    description: 'Name of the header that carries the credential, e.g. Authorization or X-Api-Key',
  }),
  auth_value: Type.Optional(
    Secret({
      maxLength: 4096,
      description: 'Value of the credential header, e.g. Bearer eyJhbGci… (kept secret); empty to send none',
    }),
  ),
  body_template: Type.Optional(
    Type.String({
      maxLength: MAX_TEMPLATE_LENGTH,
      description:
        'The request body with {{title}}, {{text}}, {{severity}}, {{event_type}}, {{url}}, {{locale}}, ' +
        "{{delivery_id}}, {{event_id}}, {{test}}, {{in_reply_to}}, {{previous_title}}; empty for Herald's default " +
        'body',
    }),
  ),
});

export type HttpConfig = Static<typeof configSchema>;

/**
 * The rules the schema cannot state: a usable address, headers that can be sent, a template that fits the content type.
 * Problems a JSON Schema keyword describes carry that keyword as their code (`pattern` with the
 * pattern, `required`), so the web client says them in the user's language.
 */
export function validateHttpConfig(c: HttpConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  let parsed: URL | undefined;
  try {
    parsed = new URL(c.url);
  } catch {
    /* reported below */
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    problems.push({
      path: '/url',
      code: 'pattern',
      params: { pattern: '^https?://' },
      message: 'must be an http:// or https:// address',
      detail: 'The address must start with http:// or https://.',
    });
  } else if (parsed.username || parsed.password) {
    problems.push({
      path: '/url',
      code: 'url_credentials',
      message: 'must not contain a user name or password',
      detail: 'Send a login as a header instead, e.g. {"name": "Authorization", "value": "Basic …"}.',
    });
  }
  const headerProblems = (name: string, value: string, path: string, valuePath = path) => {
    const lower = name.toLowerCase();
    if (!new RegExp(HEADER_NAME_PATTERN).test(name)) {
      problems.push({
        path,
        code: 'pattern',
        params: { pattern: HEADER_NAME_PATTERN },
        message: 'must be a header name (letters, digits and - _ . etc., no spaces or colons)',
        detail: `"${name.slice(0, 64)}" is not a valid header name.`,
      });
    } else if (RESERVED_HEADERS.has(lower)) {
      problems.push({
        path,
        code: 'reserved_header',
        message: `cannot be set here (${name} is set by Herald)`,
        detail:
          lower === 'content-type' ? 'Choose the body encoding with content_type.' : `Herald sets ${name} itself.`,
      });
    }
    if (/[\r\n\0]/.test(value))
      problems.push({
        path: valuePath,
        code: 'header_value',
        message: 'must have a value without line breaks',
        detail: 'A header value is one line.',
      });
  };
  const seen = new Set<string>();
  for (const [name, value] of Object.entries(c.headers ?? {})) {
    const path = `/headers/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    headerProblems(name, value, path);
    if (seen.has(name.toLowerCase()))
      problems.push({
        path,
        code: 'duplicate_header',
        message: `repeats the header ${name}`,
        detail: 'Give each header once (names are not case-sensitive).',
      });
    seen.add(name.toLowerCase());
  }
  if (c.auth_value !== undefined && c.auth_value !== '') {
    const name = c.auth_header ?? 'Authorization';
    headerProblems(name, c.auth_value, '/auth_header', '/auth_value');
    if (seen.has(name.toLowerCase()))
      problems.push({
        path: '/auth_header',
        code: 'duplicate_header',
        message: `is also among the headers (${name})`,
        detail: 'Remove it from the headers, or choose another name for the credential header.',
      });
  }
  if (c.body_template !== undefined && c.body_template.trim() !== '') {
    const { template, problems: syntax } = compile(c.body_template);
    for (const p of syntax) problems.push({ path: '/body_template', code: 'template_syntax', message: p });
    if (!syntax.length && (c.content_type ?? 'json') === 'json') {
      const bad = jsonTemplateProblem(template);
      if (bad)
        problems.push({
          path: '/body_template',
          code: 'invalid_json_template',
          message: bad,
          detail: `With content_type json the body template must give valid JSON: it ${bad}.`,
        });
    }
  }
  return problems;
}
