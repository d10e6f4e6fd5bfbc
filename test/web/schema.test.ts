/** How the config forms read plugin schemas and build the config they send (core/web/src/lib/schema.ts). */
import t from 'tap';
import {
  checkConfig,
  checkValue,
  cleanConfig,
  defaults,
  enumValues,
  fieldKind,
  issueAt,
  MASK,
  mapValueSchema,
  serverIssues,
} from '../../core/web/src/lib/schema.ts';
import type { JsonSchema } from '../../core/web/src/lib/types.ts';

// Shaped like TypeBox output of real plugins (unions of literals, Secret(), nested objects).
const schema: JsonSchema = {
  type: 'object',
  required: ['host', 'mapping'],
  properties: {
    host: {
      anyOf: [
        { type: 'string', const: 'github' },
        { type: 'string', const: 'gitea' },
      ],
    },
    token: { type: 'string', 'x-secret': true },
    port: { type: 'integer', default: 3493 },
    tls: { type: 'boolean', default: false },
    branches: { type: 'array', items: { type: 'string' } },
    tls_ca: { type: 'string', maxLength: 65536 },
    mapping: {
      type: 'object',
      required: ['title'],
      properties: { title: { type: 'string' }, key: { type: 'string', 'x-secret': true } },
    },
    severity_map: { type: 'object', patternProperties: { '^.*$': { type: 'string' } } },
  },
};
const p = schema.properties!;

t.test('each field gets its control', async (t) => {
  t.same(enumValues(p.host), ['github', 'gitea']);
  t.same([p.host, p.token, p.port, p.tls, p.branches, p.tls_ca, p.mapping, p.severity_map].map(fieldKind), [
    'enum',
    'string',
    'integer',
    'boolean',
    'string-list',
    'text',
    'object',
    'map',
  ]);
  const severity = {
    anyOf: [
      { type: 'string', const: 'info' },
      { type: 'string', const: 'critical' },
    ],
  };
  t.same(
    mapValueSchema({ type: 'object', patternProperties: { '^.*$': severity } }),
    severity,
    'a record of an enum is a key/value map',
  );
  t.equal(
    fieldKind({ type: 'object', additionalProperties: { type: 'integer' } }),
    'map',
    'so is additionalProperties with a scalar schema',
  );
  t.equal(
    fieldKind({ type: 'object', patternProperties: { '^.*$': { type: 'object', properties: {} } } }),
    'json',
    'a map of objects stays JSON',
  );
});

t.test('a new config starts from the defaults', async (t) => {
  t.same(defaults(schema), { port: 3493, tls: false, mapping: {} });
});

t.test('the config sent back', async (t) => {
  const value = {
    host: 'github',
    token: '',
    port: undefined,
    branches: ['main', '', ' release/* '],
    tls_ca: '',
    mapping: { title: 'x', key: MASK },
  };
  t.same(
    cleanConfig(schema, value, ['token', 'mapping.key']),
    { host: 'github', token: MASK, branches: ['main', 'release/*'], mapping: { title: 'x', key: MASK } },
    'empty fields left out, list lines trimmed, untouched stored secrets sent as the mask',
  );
  t.same(
    cleanConfig(schema, { host: 'gitea', token: '', mapping: { title: 'y' } }, []),
    { host: 'gitea', mapping: { title: 'y' } },
    'an empty secret with nothing stored is left out',
  );
  t.same(
    cleanConfig(schema, { host: 'gitea', token: 'new-secret', mapping: { title: 'y' } }, ['token']).token,
    'new-secret',
    'a typed secret replaces the stored one',
  );
});

t.test('fields are checked against their schema before the form is sent', async (t) => {
  const form: JsonSchema = {
    type: 'object',
    required: ['url', 'secret', 'port'],
    properties: {
      url: { type: 'string', pattern: '^https?://[^/?#]+/' },
      secret: { type: 'string', minLength: 16, 'x-secret': true },
      port: { type: 'integer', minimum: 1, maximum: 65535 },
      mode: {
        anyOf: [
          { type: 'string', const: 'a' },
          { type: 'string', const: 'b' },
        ],
      },
      mail: { type: 'string', format: 'email' },
      nested: { type: 'object', required: ['title'], properties: { title: { type: 'string', maxLength: 3 } } },
      map: { type: 'object', patternProperties: { '^.*$': { anyOf: [{ type: 'string', const: 'info' }] } } },
    },
  };
  const issues = checkConfig(form, {
    url: 'example.org',
    secret: 'short',
    port: 70000,
    mail: 'nope',
    nested: { title: 'long' },
    map: { P1: 'oops' },
  });
  t.same(Object.fromEntries(Object.entries(issues).map(([k, v]) => [k, v.code])), {
    url: 'pattern',
    secret: 'minLength',
    port: 'maximum',
    mail: 'format',
    'nested.title': 'maxLength',
    'map.P1': 'enum',
  });
  t.same(issues.secret!.params, { limit: 16 });
  t.same(
    checkConfig(form, { url: 'https://example.org/x', port: 1, nested: { title: 'ok' } }, ['secret']),
    {},
    'a stored secret left empty is kept, not missing',
  );
  t.same(
    Object.keys(checkConfig(form, { nested: {} })),
    ['url', 'secret', 'port', 'nested.title'],
    'required fields, nested ones too',
  );
  t.equal(checkValue({ type: 'integer' }, 1.5, false)!.code, 'type');
  t.equal(checkValue(form.properties!.mode!, 'c', false)!.code, 'enum');
  t.equal(checkValue({ type: 'string', minLength: 2 }, '', false), null, 'an empty optional field is fine');
});

t.test("the service's field problems are placed by path", async (t) => {
  const issues = serverIssues([
    {
      path: 'body/config/secret',
      message: 'must not have fewer than 16 characters',
      code: 'minLength',
      params: { limit: 16 },
    },
    {
      path: 'body/config/mapping/severity_map/P1',
      message: 'must be one of',
      code: 'enum',
      params: { allowedValues: ['info'] },
    },
    { path: 'body/name', message: 'is required', code: 'required' },
  ]);
  t.same(Object.keys(issues), ['secret', 'mapping.severity_map.P1'], 'only those inside the config, as dotted paths');
  t.equal(issueAt(issues, 'mapping.severity_map')!.code, 'enum', 'a map shows the problem of one of its entries');
  t.equal(issueAt(issues, 'mapping.title'), undefined);
});
