/** How the config forms read plugin schemas and build the config they send (core/web/src/lib/schema.ts). */
import t from 'tap';
import { cleanConfig, defaults, enumValues, fieldKind, MASK } from '../../core/web/src/lib/schema.ts';
import type { JsonSchema } from '../../core/web/src/lib/types.ts';

// Shaped like TypeBox output of real plugins (unions of literals, Secret(), nested objects).
const schema: JsonSchema = {
  type: 'object', required: ['host', 'mapping'],
  properties: {
    host: { anyOf: [{ type: 'string', const: 'github' }, { type: 'string', const: 'gitea' }] },
    token: { type: 'string', 'x-secret': true },
    port: { type: 'integer', default: 3493 },
    tls: { type: 'boolean', default: false },
    branches: { type: 'array', items: { type: 'string' } },
    tls_ca: { type: 'string', maxLength: 65536 },
    mapping: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, key: { type: 'string', 'x-secret': true } } },
    severity_map: { type: 'object', patternProperties: { '^.*$': { type: 'string' } } },
  },
};
const p = schema.properties!;

t.test('each field gets its control', async (t) => {
  t.same(enumValues(p.host), ['github', 'gitea']);
  t.same([p.host, p.token, p.port, p.tls, p.branches, p.tls_ca, p.mapping, p.severity_map].map(fieldKind),
    ['enum', 'string', 'integer', 'boolean', 'string-list', 'text', 'object', 'json']);
});

t.test('a new config starts from the defaults', async (t) => {
  t.same(defaults(schema), { port: 3493, tls: false, mapping: {} });
});

t.test('the config sent back', async (t) => {
  const value = { host: 'github', token: '', port: undefined, branches: ['main', '', ' release/* '], tls_ca: '', mapping: { title: 'x', key: MASK } };
  t.same(cleanConfig(schema, value, ['token', 'mapping.key']), { host: 'github', token: MASK, branches: ['main', 'release/*'], mapping: { title: 'x', key: MASK } },
    'empty fields left out, list lines trimmed, untouched stored secrets sent as the mask');
  t.same(cleanConfig(schema, { host: 'gitea', token: '', mapping: { title: 'y' } }, []), { host: 'gitea', mapping: { title: 'y' } }, 'an empty secret with nothing stored is left out');
  t.same(cleanConfig(schema, { host: 'gitea', token: 'new-secret', mapping: { title: 'y' } }, ['token']).token, 'new-secret', 'a typed secret replaces the stored one');
});
