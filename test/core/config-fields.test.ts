/**
 * Which config fields a schema declares (`undeclaredFields`): the config is closed whatever the
 * schema says about additionalProperties, nested objects are closed where they list fields, maps
 * and arrays are checked inside, unions by their best-fitting branch, intersections as one object.
 */
import t from 'tap';
import { Type, undeclaredFields, withoutFields } from '../../core/src/plugin-api/index.ts';

t.test('the config level is closed, whatever additionalProperties says', async (t) => {
  t.same(undeclaredFields(Type.Object({ a: Type.String() }), { a: 'x', b: 1 }), ['/b']);
  t.same(undeclaredFields(Type.Object({ a: Type.String() }, { additionalProperties: true }), { a: 'x', b: 1 }), ['/b']);
  t.same(
    undeclaredFields(Type.Object({}, { additionalProperties: true }), { b: 1 }),
    ['/b'],
    'no fields declared: none allowed',
  );
  t.same(undeclaredFields({ type: 'object' }, { b: 1 }), ['/b'], 'the tracker schema of a plugin without one');
  t.same(
    undeclaredFields(Type.Object({ 'a/b': Type.String() }), { 'a/b': 'x', 'c~d': 1 }),
    ['/c~0d'],
    'pointers are escaped',
  );
  t.same(undeclaredFields(Type.Record(Type.String(), Type.String()), { any: 'x' }), [], 'a map takes any key');
  t.same(
    undeclaredFields(Type.Object({}, { additionalProperties: Type.String() }), { any: 'x' }),
    [],
    'so does an object typed only by additionalProperties',
  );
  t.same(undeclaredFields(Type.Object({ a: Type.String() }), 'not an object'), [], 'the schema check reports the rest');
});

t.test('nested objects, maps, arrays, unions and intersections', async (t) => {
  const schema = Type.Object({
    mapping: Type.Object({
      title: Type.String(),
      severity_map: Type.Optional(Type.Record(Type.String(), Type.Object({ level: Type.String() }))),
    }),
    free: Type.Optional(Type.Object({}, { additionalProperties: true })),
    anything: Type.Optional(Type.Unknown()),
    rules: Type.Optional(Type.Array(Type.Object({ match: Type.String() }))),
    target: Type.Optional(
      Type.Union([
        Type.Object({ url: Type.String() }),
        Type.Object({ host: Type.String(), port: Type.Integer() }),
        Type.Null(),
      ]),
    ),
    both: Type.Optional(Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })])),
  });
  const config = {
    mapping: { title: 't', extra: 1, severity_map: { P1: { level: 'x', junk: 2 }, P2: { level: 'y' } } },
    free: { whatever: { deep: true } },
    anything: { at: 'all' },
    rules: [{ match: 'a' }, { match: 'b', why: 'c' }],
    target: { host: 'h', port: 1, user: 'u' },
    both: { a: 'x', b: 'y', c: 'z' },
    top: 1,
  };
  const found = undeclaredFields(schema, config);
  t.same(
    found.sort(),
    ['/both/c', '/mapping/extra', '/mapping/severity_map/P1/junk', '/rules/1/why', '/target/user', '/top'].sort(),
  );
  t.same(undeclaredFields(schema, { mapping: { title: 't' }, target: null }), []);
  t.same(
    undeclaredFields(schema.properties.target, { url: 'u', port: 1 }),
    ['/port'],
    'the branch that fits best counts',
  );

  const cleaned = withoutFields(config, found);
  t.same(undeclaredFields(schema, cleaned), [], 'withoutFields removes exactly those');
  t.same(cleaned.rules, [{ match: 'a' }, { match: 'b' }]);
  t.equal((config.mapping as Record<string, unknown>).extra, 1, 'the input is left as it was');
});
