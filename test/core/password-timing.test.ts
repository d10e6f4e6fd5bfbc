/**
 * An unknown email costs the same bcrypt work as a wrong password: the hash an unknown account is
 * checked against has the cost real hashes have (a cheaper one answered in 2–5 ms against ~200 ms
 * and told the two apart). Run with a cost of 5, unlike the rest of the suite, so that a dummy made
 * at any fixed cost shows.
 */
import t from 'tap';

process.env.HERALD_BCRYPT_COST = '5';
const { dummyHash, hashPassword, verifyPassword } = await import('../../core/src/auth/passwords.ts');

// A bcrypt hash reads `$2b$<cost>$…`.
const rounds = (hash: string) => Number(hash.split('$')[2]);

t.test('the dummy hash has the cost of a real one, and is made once', async (t) => {
  const real = await hashPassword('a real password');
  t.equal(rounds(real), 5);
  t.equal(rounds(await dummyHash()), 5);
  t.equal(await dummyHash(), await dummyHash());
});

t.test('an unknown account never verifies, whatever the password', async (t) => {
  t.equal(await verifyPassword('anything at all', undefined), false);
  t.equal(await verifyPassword('a real password', await hashPassword('a real password')), true);
});
