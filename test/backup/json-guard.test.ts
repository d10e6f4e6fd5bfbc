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

/** The error a text gets, as [reason, message] (the message names the character it stopped at). */
const refusal = (text: string, limits = BACKUP_LIMITS): [string, string] | undefined => {
  try {
    guardJson(text, limits);
    return undefined;
  } catch (err) {
    if (err instanceof JsonGuardError) {
      if (!err.message.endsWith(`(at character ${err.offset})`)) throw new Error(`offset not in ${err.message}`);
      return [err.reason, err.message];
    }
    throw err;
  }
};

t.test('each refusal says what is wrong and where it stopped', async (t) => {
  const small = { maxDepth: 3, maxNodes: 5, maxStringLength: 4 };
  const cases: [string, string, string][] = [
    ['', 'syntax', 'The file is empty (at character 0)'],
    ['  ', 'syntax', 'The file is empty (at character 2)'],
    ['[1', 'syntax', 'The JSON ends early (truncated?) (at character 2)'],
    ['[', 'syntax', 'The JSON ends early (truncated?) (at character 1)'],
    ['"ab', 'syntax', 'The JSON ends early, inside a string (truncated?) (at character 3)'],
    ['["a\\', 'syntax', 'The JSON ends early, inside a string (truncated?) (at character 4)'],
    ['"\\u12', 'syntax', 'The JSON ends early, inside a string (truncated?) (at character 5)'],
    ['{"a":1,2}', 'syntax', 'Expected a quoted key (at character 7)'],
    ['{a:1}', 'syntax', 'Expected a quoted key (at character 1)'],
    ['{]', 'syntax', 'Expected a quoted key (at character 1)'],
    ['[1 2]', 'syntax', 'Expected "," or a closing bracket, found "2" (at character 3)'],
    ['1 x', 'syntax', 'Unexpected text after the JSON value (at character 2)'],
    ['{"a" 1}', 'syntax', 'Expected ":" after a key (at character 5)'],
    ['[}', 'syntax', 'Unexpected "}" (at character 1)'],
    ['[1}', 'syntax', 'Unexpected "}" (at character 2)'],
    ['{"a":1]', 'syntax', 'Unexpected "]" (at character 6)'],
    ['}', 'syntax', 'Unexpected "}" (at character 0)'],
    ['[@]', 'syntax', 'Unexpected "@" (at character 1)'],
    ['[#]', 'syntax', 'Unexpected "#" (at character 1)'],
    ['[.5]', 'syntax', 'Unexpected "." (at character 1)'],
    ['[true1]', 'syntax', 'Expected "," or a closing bracket, found "1" (at character 5)'],
    ['[1a]', 'syntax', 'Expected "," or a closing bracket, found "a" (at character 2)'],
    ['"\\x"', 'syntax', '"\\x" is not a JSON escape (at character 2)'],
    ['"\\u12g4"', 'syntax', 'A \\u escape needs four hex digits (at character 5)'],
    ['"a\u0001"', 'syntax', 'A string holds an unescaped control character (at character 2)'],
    ['"a\u001f"', 'syntax', 'A string holds an unescaped control character (at character 2)'],
    ['[truex]', 'syntax', '"truex" is not a JSON value (at character 6)'],
    ['[-]', 'syntax', '"-" is not a JSON value (at character 2)'],
    [`[${'1'.repeat(30)}x]`, 'syntax', 'Expected "," or a closing bracket, found "x" (at character 31)'],
    [`${'9'.repeat(25)}.`, 'syntax', `"${'9'.repeat(20)}" is not a JSON value (at character 26)`],
    ['[[[[]]]]', 'depth', 'The JSON is nested deeper than 3 levels (at character 3)'],
    ['[1,2,3,4,5]', 'nodes', 'The JSON holds more than 5 values (at character 9)'],
    ['["abcde"]', 'string_length', 'A string is longer than 4 characters (at character 6)'],
    ['{"abcde":1}', 'string_length', 'A string is longer than 4 characters (at character 6)'],
  ];
  for (const [text, reason, message] of cases) t.same(refusal(text, small), [reason, message], JSON.stringify(text));
  t.same(refusal('{"__proto__":1}'), ['forbidden_key', 'The key "__proto__" is not allowed (at character 11)']);
  t.same(refusal('{"a":{"constructor":1}}'), [
    'forbidden_key',
    'The key "constructor" is not allowed (at character 18)',
  ]);
});

t.test('a number or literal may run to 65 characters, not 66', async (t) => {
  t.equal(reason('1'.repeat(65)), undefined);
  t.same(refusal('1'.repeat(66)), ['syntax', 'A number or literal is too long (at character 65)']);
  t.equal(reason(`[${'1'.repeat(65)}]`), undefined);
  t.same(refusal(`[${'1'.repeat(66)}]`), ['syntax', 'A number or literal is too long (at character 66)']);
});

t.test('whitespace of each kind between tokens; every escape; the last character below a space', async (t) => {
  t.equal(reason('\t{\r\n"a"\t:\n[ 1 ,\r2 ]\r}\n'), undefined);
  t.equal(reason('"\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\uABCD \\uabcd"'), undefined);
  t.equal(reason('"a\u0020b"'), undefined, 'a space is not a control character');
  t.equal(reason('"\u007f\u00a0"'), undefined, 'nor is anything above it');
  for (const c of ['\v', '\f', '\u00a0', '\u2028'])
    t.same(
      refusal(`[1,${c}2]`),
      ['syntax', `Unexpected "${c}" (at character 3)`],
      `U+${c.charCodeAt(0).toString(16).padStart(4, '0')} is not JSON whitespace`,
    );
});

t.test('each string is measured on its own: keys and values, one after another', async (t) => {
  const limits = { maxDepth: 10, maxNodes: 100, maxStringLength: 4 };
  t.equal(reason('["abcd","abcd","abcd"]', limits), undefined);
  t.equal(reason('{"abcd":"abcd","wxyz":"abcd"}', limits), undefined);
  t.equal(reason('{"ab":"\\u00e9"}', limits), 'string_length', 'escapes count as written: \\u00e9 is 6');
  t.equal(reason('{"ab":"\\n\\t"}', limits), undefined, 'two escapes are 4');
});

t.test('keys: a value equal to a forbidden key is fine, a key after a value is read as a key again', async (t) => {
  t.equal(reason('{"a":"__proto__","b":"constructor","c":["prototype"]}'), undefined);
  t.equal(reason('{"a":"x","__proto__":1}'), 'forbidden_key');
  t.equal(reason('[{"a":1},{"prototype":1}]'), 'forbidden_key');
  t.equal(reason('{"a":{"b":1},"constructor":1}'), 'forbidden_key');
  t.equal(
    reason('{"a":1,"b":{"c":[1,{"d":2}]},"e":3}'),
    undefined,
    'commas in objects lead to keys, in arrays to values',
  );
  t.equal(reason('[1,"a":2]'), 'syntax', 'a key in an array');
});

t.test('nodes and depth count every kind of container and value, at the limit and one past it', async (t) => {
  const limits = { maxDepth: 2, maxNodes: 4, maxStringLength: 10 };
  t.equal(reason('[{},"s",1]', limits), undefined, '4 values');
  t.equal(reason('[{},"s",1,null]', limits), 'nodes');
  t.equal(reason('[[],true,false]', limits), undefined);
  t.equal(reason('[[],true,false,{}]', limits), 'nodes');
  t.equal(reason('{"a":{}}', limits), undefined, 'depth 2');
  t.equal(reason('{"a":{"b":[]}}', limits), 'depth');
  t.equal(reason('[{"a":[]}]', limits), 'depth');
  const g = new JsonGuard(limits);
  g.write('[[],');
  t.equal(g.nodeCount, 2);
  g.write('"x"]');
  g.end();
  t.equal(g.nodeCount, 3);
});

t.test(
  'parseGuarded guards before it parses: what JSON.parse would take but the guard refuses is refused',
  async (t) => {
    const cases: [string, string][] = [
      ['{"__proto__":{"x":1}}', 'forbidden_key'],
      ['[[[[[[[[[[[0]]]]]]]]]]]', 'depth'],
    ];
    for (const [text, why] of cases) {
      t.doesNotThrow(() => JSON.parse(text), 'JSON.parse alone accepts it');
      let err: unknown;
      try {
        parseGuarded(text);
      } catch (e) {
        err = e;
      }
      t.equal(err instanceof JsonGuardError ? err.reason : err, why, text);
    }
    t.same(parseGuarded('{"a":[1,{"b":null}]}'), { a: [1, { b: null }] });
  },
);
