import t from 'tap';
import { BACKUP_LIMITS, guardJson, JsonGuard, JsonGuardError, parseGuarded } from '../../core/src/backup/json-guard.ts';

const reason = (text: string, limits = BACKUP_LIMITS): string | undefined => {
  try {
    guardJson(text, limits);
    return undefined;
  } catch (err) {
    if (err instanceof JsonGuardError) return err.reason;
    throw err;
  }
};

t.test('accepts valid JSON of every kind, and what it accepts JSON.parse reads the same', async (t) => {
  const docs = [
    '{}',
    '[]',
    '0',
    '-1.5e+10',
    '"x"',
    'true',
    'false',
    'null',
    ' { "a" : [1, 2.0, -0, 3e5, "s\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9"], "b": {"c": null} } ',
    JSON.stringify({ deep: [[[[{ x: 1 }]]]], unicode: 'Привет 🎉', empty: '' }),
  ];
  for (const d of docs) {
    t.equal(reason(d), undefined, d);
    t.same(parseGuarded(d), JSON.parse(d));
  }
});

t.test('refuses what is not JSON, including truncated text', async (t) => {
  for (const d of [
    '',
    '   ',
    '{',
    '{"a":',
    '{"a":1',
    '[1,]',
    '[1 2]',
    '{"a" 1}',
    '{a:1}',
    "{'a':1}",
    '01',
    '1.',
    '.5',
    '+1',
    'tru',
    'nul',
    'truex',
    '"unterminated',
    '"bad \\x escape"',
    '"\\u12g4"',
    '"raw\ncontrol"',
    '{"a":1}}',
    '[1]]',
    '{"a":1} x',
    '{"a":1,}',
    'NaN',
    'Infinity',
    '{"a":[}',
  ]) {
    t.equal(reason(d), 'syntax', JSON.stringify(d));
    t.throws(() => JSON.parse(d), `JSON.parse also refuses ${JSON.stringify(d)}`);
  }
});

t.test('depth: 10 levels pass, 11 are refused (outermost container is level 1)', async (t) => {
  const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);
  t.equal(reason(nest(10)), undefined);
  t.equal(reason(nest(11)), 'depth');
  const objects = (n: number) => '{"a":'.repeat(n - 1) + '{}' + '}'.repeat(n - 1);
  t.equal(reason(objects(10)), undefined);
  t.equal(reason(objects(11)), 'depth');
  // A bomb far deeper than the limit is refused at level 11, long before the end.
  const bomb = '['.repeat(1_000_000);
  try {
    guardJson(bomb);
    t.fail('should throw');
  } catch (err) {
    t.equal((err as JsonGuardError).reason, 'depth');
    t.equal((err as JsonGuardError).offset, 10);
  }
});

t.test('nodes: 100,000 values pass, one more is refused; every kind of value counts', async (t) => {
  const wide = (n: number) => `[${Array.from({ length: n - 1 }, () => '0').join(',')}]`;
  t.equal(reason(wide(100_000)), undefined);
  t.equal(reason(wide(100_001)), 'nodes');
  const g = new JsonGuard();
  g.write('{"a":[1,"s",true,null,{}],"b":false}');
  g.end();
  t.equal(g.nodeCount, 8, 'root, array, 1, "s", true, null, {}, false');
  t.equal(reason('[' + '{},'.repeat(100_000) + '{}]'), 'nodes', 'a wide bomb of empty objects');
});

t.test('forbidden keys are refused wherever they are, however they are escaped', async (t) => {
  for (const k of ['__proto__', 'constructor', 'prototype', '\\u005f_proto__', 'construct\\u006fr']) {
    t.equal(reason(`{"a":{"b":[{"${k}":{}}]}}`), 'forbidden_key', k);
  }
  t.equal(reason('{"proto":1,"constructors":2,"x":"__proto__"}'), undefined, 'similar keys and such values are fine');
});

t.test('string length is bounded for keys and values', async (t) => {
  const limits = { ...BACKUP_LIMITS, maxStringLength: 10 };
  t.equal(reason('["0123456789"]', limits), undefined);
  t.equal(reason('["01234567890"]', limits), 'string_length');
  t.equal(reason('{"01234567890":1}', limits), 'string_length');
});

t.test('streaming: chunks split anywhere give the same verdict as the whole text', async (t) => {
  const doc = JSON.stringify({ a: 'x\\"y', b: [1.25e-3, true, null], 'c\u00e9': { d: '\u1234' } });
  for (let size = 1; size <= 7; size++) {
    const g = new JsonGuard();
    for (let i = 0; i < doc.length; i += size) g.write(doc.slice(i, i + size));
    g.end();
    t.pass(`chunks of ${size}`);
  }
  const g = new JsonGuard();
  g.write('{"__pro');
  try {
    g.write('to__":1}');
    t.fail('should throw');
  } catch (err) {
    t.equal((err as JsonGuardError).reason, 'forbidden_key', 'a key split across chunks is still seen');
  }
});
