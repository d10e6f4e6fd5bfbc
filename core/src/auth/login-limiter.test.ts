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
  t.equal(
    login(l, 'victim', 'A', true, now),
    30,
    'A is locked for 30 s after 5 failures, even with the right password',
  );
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
  for (let i = 0; i < 5; i++)
    t.equal(login(l, 'victim', 'A', false, now), 0, 'an hour after the last failure A is forgotten');
});

t.test('a success clears its own account-and-address count, not the address count', async (t) => {
  const l = new LoginLimiter({ address: { free: 6, baseMs: 30 * S } });
  const now = 5_000_000;
  for (let i = 0; i < 4; i++) login(l, 'me', 'A', false, now);
  t.equal(login(l, 'me', 'A', true, now), 0, 'logged in after 4 failures');
  for (let i = 0; i < 2; i++) t.equal(login(l, 'me', 'A', false, now), 0);
  // 6 failures from A in all (the pair counts only the last 2): the address allowance is used up.
  t.equal(
    login(l, 'another', 'A', true, now),
    30,
    'the address is locked: logging in to an account of your own did not reset it',
  );
  const fresh = new LoginLimiter();
  for (let i = 0; i < 4; i++) login(fresh, 'me', 'A', false, now);
  login(fresh, 'me', 'A', true, now);
  for (let i = 0; i < 5; i++)
    t.equal(login(fresh, 'me', 'A', false, now), 0, 'after a success the pair has its 5 failures again');
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
  t.same(
    started.map((s) => s.wait),
    [0, 0, 0, 0, 0, 30, 30, 30],
    'only 5 reach the password check',
  );
});

t.test('memory stays bounded', async (t) => {
  const l = new LoginLimiter({ maxEntries: 100 });
  for (let i = 0; i < 1000; i++) login(l, `u${i}`, `addr${i}`, false, 40_000_000);
  const sizes = Object.values(l as unknown as Record<string, unknown>)
    .filter((v) => v instanceof Map)
    .map((m) => (m as Map<string, unknown>).size);
  t.ok(
    sizes.every((n) => n <= 100),
    `maps hold at most 100 entries (${sizes.join(', ')})`,
  );
});

/** Real wall-clock instants, so that arithmetic on them behaves as in production. */
const T0 = Date.UTC(2026, 4, 1, 12, 0, 0);
const DAY = 86_400_000;

t.test('a success remembered in memory keeps the address known for exactly 30 days', async (t) => {
  const lockAccount = (l: LoginLimiter, at: number) => {
    for (let i = 0; i < 10; i++) login(l, 'victim', `bot${i}`, false, at);
  };
  const l = new LoginLimiter();
  t.equal(login(l, 'victim', 'home', true, T0), 0);
  lockAccount(l, T0 + 30 * DAY - 1);
  t.equal(l.accountLocked('victim', T0 + 30 * DAY - 1), true);
  t.equal(login(l, 'victim', 'home', true, T0 + 30 * DAY - 1), 0, 'known until the last millisecond of the 30 days');
  const l2 = new LoginLimiter();
  t.equal(login(l2, 'victim', 'home', true, T0), 0);
  lockAccount(l2, T0 + 30 * DAY);
  t.equal(login(l2, 'victim', 'home', true, T0 + 30 * DAY), 30, 'unknown once 30 days have passed');
  t.equal(l2.accountLocked('victim', T0 + 30 * DAY + 30_000), false, 'the account lock is short');
  t.equal(l2.accountLocked('victim', T0 + 30 * DAY + 29_999), true);
  t.equal(new LoginLimiter().accountLocked('nobody', T0), false);
  t.equal(new LoginLimiter().knownMs, 30 * DAY, 'what the caller keeps in the database, as long');
  t.equal(new LoginLimiter({ knownMs: DAY }).knownMs, DAY);
  const l3 = new LoginLimiter();
  lockAccount(l3, T0);
  t.equal(l3.begin('victim', 'cafe', T0, false).wait, 30);
  t.equal(l3.begin('victim', 'home', T0, true).wait, 0, 'the database says the address is known: it gets through');
});

t.test('a counter is forgotten exactly an hour after its last failure', async (t) => {
  const l = new LoginLimiter({ pair: { free: 1, baseMs: 1000 } });
  t.equal(login(l, 'a', 'A', false, T0), 0);
  t.equal(login(l, 'a', 'A', false, T0 + 1000), 0, 'after the first 1 s lock');
  t.equal(login(l, 'a', 'A', false, T0 + 1000), 2, 'locked again, for twice as long');
  t.equal(
    login(l, 'a', 'A', false, T0 + 1000 + 3_600_000 - 1),
    0,
    'still remembered one millisecond before the hour: the lock has doubled',
  );
  t.equal(login(l, 'a', 'A', false, T0 + 1000 + 3_600_000 - 1), 4);
  const l2 = new LoginLimiter({ pair: { free: 1, baseMs: 1000 } });
  login(l2, 'a', 'A', false, T0);
  login(l2, 'a', 'A', false, T0 + 1000);
  t.equal(login(l2, 'a', 'A', false, T0 + 1000 + 3_600_000), 0, 'forgotten at the hour');
  t.equal(login(l2, 'a', 'A', false, T0 + 1000 + 3_600_000), 1, 'counting from one again: the first 1 s lock');
});

t.test("a success from an address that failed before keeps its place in the account's count", async (t) => {
  const l = new LoginLimiter();
  t.equal(login(l, 'victim', 'A', false, T0), 0, 'A fails once: one failing address');
  t.equal(login(l, 'victim', 'A', true, T0), 0, 'then logs in (its first failure still counts toward the account)');
  for (let i = 0; i < 9; i++) t.equal(login(l, 'victim', `bot${i}`, false, T0), 0);
  t.equal(l.accountLocked('victim', T0), true, 'A and 9 more addresses: 10, the account is locked');
  t.equal(login(l, 'victim', 'new', true, T0), 30);
  const fresh = new LoginLimiter();
  t.equal(login(fresh, 'victim', 'A', true, T0), 0, 'a first attempt that succeeds is taken back whole');
  for (let i = 0; i < 9; i++) login(fresh, 'victim', `bot${i}`, false, T0);
  t.equal(fresh.accountLocked('victim', T0), false, '9 failing addresses do not lock it');
});

t.test('past maxEntries the least recently touched entry goes first, and only it', async (t) => {
  const l = new LoginLimiter({ maxEntries: 3, pair: { free: 1, baseMs: 30_000 } });
  for (const a of ['A', 'B', 'C']) t.equal(login(l, 'acct', a, false, T0), 0);
  t.equal(l.begin('acct', 'A', T0).wait, 30, 'at exactly maxEntries nothing is dropped: A is still locked');
  login(l, 'acct', 'A', false, T0 + 30_000);
  // A was touched last; adding D drops B, the least recently touched.
  t.equal(login(l, 'acct', 'D', false, T0 + 30_000), 0);
  t.equal(l.begin('acct', 'A', T0 + 30_000).wait, 60, 'A, touched again, is kept (its lock doubled)');
  t.equal(l.begin('acct', 'C', T0 + 1).wait, 30, 'C is kept');
  t.equal(l.begin('acct', 'D', T0 + 30_000).wait, 30, 'D is kept');
  t.equal(l.begin('acct', 'B', T0 + 1).wait, 0, 'B alone was dropped');
});

t.test('a success takes a single failure off the address count entirely: it no longer holds a place', async (t) => {
  // Two places; the address counter locks at its first failure; pairs and accounts never lock here.
  const l = new LoginLimiter({
    maxEntries: 2,
    address: { free: 1, baseMs: MIN },
    pair: { free: 100, baseMs: MIN },
    account: { free: 100, baseMs: MIN },
  });
  t.ok(l.begin('acct', 'B', T0).attempt, 'B fails');
  const a = l.begin('acct', 'A', T0 + 1).attempt!;
  l.succeeded(a, T0 + 1);
  t.ok(l.begin('acct', 'C', T0 + 2).attempt, 'C fails');
  // A's count went from 1 to nothing, so B and C fill the two places and B is still counted.
  t.equal(l.begin('acct', 'B', T0 + 3).wait, 60, 'B is still locked: nothing was dropped for A');
  t.equal(l.begin('acct', 'C', T0 + 3).wait, 60);
  t.equal(l.begin('acct', 'A', T0 + 3).wait, 0, 'A has no failure left');
});

t.test('a success whose counters were dropped meanwhile is still taken back cleanly', async (t) => {
  const l = new LoginLimiter({ maxEntries: 1 });
  const first = l.begin('me', 'A', T0).attempt!;
  l.begin('other', 'B', T0);
  t.doesNotThrow(() => l.succeeded(first, T0), 'the address and account counters of A are gone');
  t.equal(l.begin('other', 'B', T0).wait, 0);
});

t.test('the known addresses in the database: remembered, found within the window, pruned after it', async (t) => {
  const { default: Sqlite } = await import('better-sqlite3');
  const migration = (await import('../../../migrations/0028_login_known_addresses.ts')).default;
  const sqlite = new Sqlite(':memory:');
  t.teardown(() => sqlite.close());
  for (const sql of migration.up()) sqlite.exec(sql as string);
  const q = {
    dialect: 'sqlite' as const,
    all: async (sql: string, p: unknown[] = []) => sqlite.prepare(sql).all(...(p as [])) as any[],
    get: async (sql: string, p: unknown[] = []) => sqlite.prepare(sql).get(...(p as [])) as any,
    run: async (sql: string, p: unknown[] = []) => sqlite.prepare(sql).run(...(p as [])).changes,
  };
  const { KnownAddresses } = await import('./login-limiter.ts');
  const at = (ms: number) => new Date(T0 + ms);
  await KnownAddresses.remember(q, 'me', 'home', at(0), 30 * DAY);
  t.equal(await KnownAddresses.has(q, 'me', 'home', at(0)), true, 'found since the instant it was recorded');
  t.equal(await KnownAddresses.has(q, 'me', 'home', at(1)), false, 'not since a later instant');
  t.equal(await KnownAddresses.has(q, 'me', 'cafe', at(-DAY)), false);
  t.equal(await KnownAddresses.has(q, 'you', 'home', at(-DAY)), false, 'per account');
  await KnownAddresses.remember(q, 'me', 'cafe', at(10 * DAY), 30 * DAY);
  await KnownAddresses.remember(q, 'me', 'home', at(20 * DAY), 30 * DAY);
  t.equal(await KnownAddresses.has(q, 'me', 'home', at(20 * DAY)), true, 'a new success moves the time forward');
  t.same(
    sqlite.prepare('SELECT address FROM login_known_addresses ORDER BY address').all(),
    [{ address: 'cafe' }, { address: 'home' }],
    'one row per address',
  );
  await KnownAddresses.remember(q, 'you', 'old', at(0), 30 * DAY);
  await KnownAddresses.remember(q, 'me', 'home', at(40 * DAY), 30 * DAY);
  t.same(
    sqlite.prepare('SELECT account, address FROM login_known_addresses ORDER BY account, address').all(),
    [
      { account: 'me', address: 'cafe' },
      { account: 'me', address: 'home' },
      { account: 'you', address: 'old' },
    ],
    'an address exactly 30 days old is kept; other accounts are not pruned',
  );
  await KnownAddresses.remember(q, 'me', 'home', at(40 * DAY + 1), 30 * DAY);
  t.same(
    sqlite.prepare(`SELECT address FROM login_known_addresses WHERE account = 'me' ORDER BY address`).all(),
    [{ address: 'home' }],
    'older than 30 days: pruned',
  );
});
