import t from 'tap';
import { maskSecrets, restoreMasked, MASKED } from './secrets.ts';

const paths = ['password', 'smtp.pass', 'headers[].value', 'keys[]'];
const stored = { password: 'p1', smtp: { host: 'h', pass: 'p2' }, headers: [{ name: 'a', value: 'v1' }, { name: 'b', value: 'v2' }], keys: ['k1', 'k2'], empty: '' };

t.test('masks every secret path, arrays included, and lists the ones set', async (t) => {
  const { config, secrets_set } = maskSecrets({ ...stored, missing: undefined }, [...paths, 'absent', 'empty']);
  t.same(config, { password: MASKED, smtp: { host: 'h', pass: MASKED }, headers: [{ name: 'a', value: MASKED }, { name: 'b', value: MASKED }], keys: [MASKED, MASKED], empty: '' });
  t.same(secrets_set, paths, 'paths without a value are not listed');
  t.equal(stored.password, 'p1', 'the input is not changed');
});

t.test('a mask sent back keeps the stored secret; a new value replaces it', async (t) => {
  const incoming = { password: MASKED, smtp: { host: 'h2', pass: 'new' }, headers: [{ name: 'a', value: MASKED }, { name: 'c', value: 'v3' }], keys: ['k9', MASKED] };
  const { config, unresolved } = restoreMasked(incoming, stored, paths);
  t.same(config, { password: 'p1', smtp: { host: 'h2', pass: 'new' }, headers: [{ name: 'a', value: 'v1' }, { name: 'c', value: 'v3' }], keys: ['k9', 'k2'] });
  t.same(unresolved, []);
  t.equal(incoming.password, MASKED, 'the input is not changed');
});

t.test('a mask with nothing stored behind it is reported', async (t) => {
  const { unresolved } = restoreMasked({ password: MASKED, keys: ['a', 'b', MASKED] }, { keys: ['x'] }, paths);
  t.same(unresolved, ['password', 'keys[]']);
  t.same(restoreMasked({ password: MASKED }, undefined, paths).unresolved, ['password'], 'on create nothing is stored');
});
