import t from 'tap';
import { MASKED, maskSecrets, restoreMasked } from './secrets.ts';

const paths = ['password', 'smtp.pass', 'headers[].value', 'keys[]'];
const stored = {
  password: 'p1',
  smtp: { host: 'h', pass: 'p2' },
  headers: [
    { name: 'a', value: 'v1' },
    { name: 'b', value: 'v2' },
  ],
  keys: ['k1', 'k2'],
  empty: '',
};

t.test('masks every secret path, arrays included, and lists the ones set', async (t) => {
  const { config, secrets_set } = maskSecrets({ ...stored, missing: undefined }, [...paths, 'absent', 'empty']);
  t.same(config, {
    password: MASKED,
    smtp: { host: 'h', pass: MASKED },
    headers: [
      { name: 'a', value: MASKED },
      { name: 'b', value: MASKED },
    ],
    keys: [MASKED, MASKED],
    empty: '',
  });
  t.same(secrets_set, paths, 'paths without a value are not listed');
  t.equal(stored.password, 'p1', 'the input is not changed');
});

t.test('a mask sent back keeps the stored secret; a new value replaces it', async (t) => {
  const incoming = {
    password: MASKED,
    smtp: { host: 'h2', pass: 'new' },
    headers: [
      { name: 'a', value: MASKED },
      { name: 'c', value: 'v3' },
    ],
    keys: ['k9', MASKED],
  };
  const { config, unresolved } = restoreMasked(incoming, stored, paths);
  t.same(config, {
    password: 'p1',
    smtp: { host: 'h2', pass: 'new' },
    headers: [
      { name: 'a', value: 'v1' },
      { name: 'c', value: 'v3' },
    ],
    keys: ['k9', 'k2'],
  });
  t.same(unresolved, []);
  t.equal(incoming.password, MASKED, 'the input is not changed');
});

t.test('a mask with nothing stored behind it is reported', async (t) => {
  const { unresolved } = restoreMasked({ password: MASKED, keys: ['a', 'b', MASKED] }, { keys: ['x'] }, paths);
  t.same(unresolved, ['password', 'keys[]']);
  t.same(restoreMasked({ password: MASKED }, undefined, paths).unresolved, ['password'], 'on create nothing is stored');
});

t.test('paths with nested arrays, odd names, and configs whose shape does not fit the path', async (t) => {
  t.equal(MASKED, '********');
  t.same(
    maskSecrets({ m: [['a', 'b'], ['c']] }, ['m[][]']).config,
    { m: [[MASKED, MASKED], [MASKED]] },
    'an array of arrays',
  );
  t.same(
    maskSecrets({ 'a]b': 's', 'k[]x': 't', b: 'u' }, ['a]b', 'k[]x']),
    { config: { 'a]b': MASKED, 'k[]x': MASKED, b: 'u' }, secrets_set: ['a]b', 'k[]x'] },
    'a name with brackets that are not an array marker is a plain name',
  );
  t.same(
    maskSecrets({ password: null, token: undefined, key: '' }, ['password', 'token', 'key']),
    { config: { password: null, token: undefined, key: '' }, secrets_set: [] },
    'null, undefined and empty are not secrets set',
  );
  t.same(
    maskSecrets({ keys: 'not a list', smtp: 'not an object', list: ['x'] }, ['keys[]', 'smtp.pass', 'list.0']).config,
    { keys: 'not a list', smtp: 'not an object', list: ['x'] },
    'a value of another shape is left alone',
  );
  t.same(restoreMasked({ keys: 'not a list', smtp: 'x' }, stored, ['keys[]', 'smtp.pass']), {
    config: { keys: 'not a list', smtp: 'x' },
    unresolved: [],
  });
  t.same(
    restoreMasked({ headers: [{ value: MASKED }] }, { headers: 'gone' }, ['headers[].value']).unresolved,
    ['headers[].value'],
    'nothing stored at that shape',
  );
});
