import t from 'tap';
import { LoginLimiter } from './login-limiter.ts';

const S = 1000;
const MIN = 60 * S;

/** One login: begin, then succeed when `ok`. Returns the wait in seconds (0: the password was checked). */
function login(l: LoginLimiter, account: string, address: string, ok: boolean, now: number): number {
  const { wait, attempt } = l.begin(account, address, now);
  if (attempt && ok) l.succeeded(attempt, now);
  return wait;
}

t.test('an attacker on one address locks only that address out of the account, with doubling locks', async (t) => {
  const l = new LoginLimiter();
  let now = 1_000_000;
  for (let i = 0; i < 5; i++) t.equal(login(l, 'victim', 'A', false, now), 0, `failure ${i + 1} is checked`);
  t.equal(login(l, 'victim', 'A', true, now), 30, 'A is locked for 30 s after 5 failures, even with the right password');
  t.equal(login(l, 'victim', 'B', true, now), 0, 'the real user from B gets in');
  t.equal(login(l, 'someone-else', 'A', false, now), 0, 'A may still try other accounts');
  now += 30 * S;
  t.equal(login(l, 'victim', 'A', false, now), 0, 'after the lock one more try');
  t.equal(login(l, 'victim', 'A', false, now), 60, 'then the lock doubles');
  const waits: number[] = [];
  for (let i = 0; i < 8; i++) {
    now += 16 * MIN;
    t.equal(login(l, 'victim', 'A', false, now), 0);
    waits.push(login(l, 'victim', 'A', false, now));
  }
  t.same(waits, [120, 240, 480, 900, 900, 900, 900, 900], 'doubling up to 15 minutes');
  t.equal(login(l, 'victim', 'B', true, now), 0, 'hours of guessing from A never lock the account');
  t.equal(login(l, 'victim', 'C', true, now), 0, 'not even for an address the user never used');
  now += 61 * MIN + 15 * MIN;
  for (let i = 0; i < 5; i++) t.equal(login(l, 'victim', 'A', false, now), 0, 'an hour after the last failure A is forgotten');
});

t.test('a success clears its own account-and-address count, not the address count', async (t) => {
  const l = new LoginLimiter({ address: { free: 6, baseMs: 30 * S } });
  const now = 5_000_000;
  for (let i = 0; i < 4; i++) login(l, 'me', 'A', false, now);
  t.equal(login(l, 'me', 'A', true, now), 0, 'logged in after 4 failures');
  for (let i = 0; i < 2; i++) t.equal(login(l, 'me', 'A', false, now), 0);
  // 6 failures from A in all (the pair counts only the last 2): the address allowance is used up.
  t.equal(login(l, 'another', 'A', true, now), 30, 'the address is locked: logging in to an account of your own did not reset it');
  const fresh = new LoginLimiter();
  for (let i = 0; i < 4; i++) login(fresh, 'me', 'A', false, now);
  login(fresh, 'me', 'A', true, now);
  for (let i = 0; i < 5; i++) t.equal(login(fresh, 'me', 'A', false, now), 0, 'after a success the pair has its 5 failures again');
  t.equal(login(fresh, 'me', 'A', false, now), 30);
});

t.test('an address trying many accounts is locked after 20 failures', async (t) => {
  const l = new LoginLimiter();
  const now = 9_000_000;
  for (let i = 0; i < 20; i++) t.equal(login(l, `user${i}`, 'A', false, now), 0);
  t.equal(login(l, 'user99', 'A', true, now), 30, 'locked for any account');
  t.equal(login(l, 'user99', 'B', true, now), 0, 'other addresses are not');
});

t.test('many addresses on one account lock it for addresses that never logged in to it', async (t) => {
  const l = new LoginLimiter();
  let now = 20_000_000;
  t.equal(login(l, 'victim', 'home', true, now), 0, 'the user logs in from home once');
  now += 5 * 86_400_000;
  for (let i = 0; i < 10; i++) t.equal(login(l, 'victim', `bot${i}`, false, now), 0);
  t.equal(login(l, 'victim', 'bot99', false, now), 30, 'an 11th address waits');
  t.equal(login(l, 'victim', 'cafe', true, now), 30, 'so does a new address of the real user');
  t.equal(login(l, 'victim', 'home', true, now), 0, 'the known address gets in');
  t.equal(login(l, 'other', 'bot99', true, now), 0, 'other accounts are untouched');
  now += 30 * S;
  t.equal(login(l, 'victim', 'cafe', true, now), 0, 'the lock is short');
  now += 31 * 86_400_000;
  for (let i = 0; i < 10; i++) login(l, 'victim', `bot${i}`, false, now);
  t.equal(login(l, 'victim', 'home', true, now), 30, 'an address is known for 30 days after its last success');
});

t.test('parallel attempts are counted before their passwords are checked', async (t) => {
  const l = new LoginLimiter();
  const now = 30_000_000;
  const started = Array.from({ length: 8 }, () => l.begin('victim', 'A', now));
  t.same(started.map((s) => s.wait), [0, 0, 0, 0, 0, 30, 30, 30], 'only 5 reach the password check');
});

t.test('memory stays bounded', async (t) => {
  const l = new LoginLimiter({ maxEntries: 100 });
  for (let i = 0; i < 1000; i++) login(l, `u${i}`, `addr${i}`, false, 40_000_000);
  const sizes = Object.values(l as unknown as Record<string, unknown>).filter((v) => v instanceof Map).map((m) => (m as Map<string, unknown>).size);
  t.ok(sizes.every((n) => n <= 100), `maps hold at most 100 entries (${sizes.join(', ')})`);
});
