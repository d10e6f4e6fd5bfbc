/**
 * The daily AI quotas without a running service: `Quotas` over an in-memory SQLite database with
 * the real migrations, a clock the test sets, and the quota routes on a bare HTTP server (the
 * service's own `createServer`) with a token check that looks tokens up in a map.
 */
import t, { type Test } from 'tap';
import { migrations } from '../../../migrations/index.ts';
import type { Core } from '../core.ts';
import type { Database, Queryable } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';
import { openNativeSqlite } from '../db/native-connect.ts';
import type { HttpError } from '../http/problem.ts';
import { createServer } from '../http/server.ts';
import { createLogger } from '../logging/logger.ts';
import type { PublicUser } from '../users/users.ts';
import { Quotas, quotaRoutes } from './quotas.ts';

interface Harness {
  db: Database;
  quotas: Quotas;
  core: Core;
  /** The instant the clock reads; `later` are read one per call after it, then the last one stays. */
  setClock(iso: string, ...later: string[]): void;
  config: { quotaTimezone: string };
  defaults: Record<string, string>;
  user(limits?: { messages?: number | null; tokens?: number | null }, role?: 'user' | 'admin'): Promise<PublicUser>;
  row(userId: string, day: string): Promise<{ messages: number; tokens: number; updated_at: string } | undefined>;
  tokens: Map<string, { sub: string; jti: string; ver: number }>;
}

async function harness(t: Test): Promise<Harness> {
  const { db } = openNativeSqlite(':memory:', { create: true });
  t.teardown(() => db.close());
  await migrate(db, migrations);
  let times: number[] = [Date.parse('2030-06-15T10:00:00Z')];
  const clock = {
    now: () => new Date(times.length > 1 ? times.shift()! : times[0]!),
  };
  const config = { quotaTimezone: 'UTC' };
  const defaults: Record<string, string> = {
    default_max_ai_messages_per_day: '100',
    default_max_ai_tokens_per_day: '500000',
  };
  const settings = {
    getInt: async (key: string) => {
      if (!(key in defaults)) throw new Error(`unknown setting ${key}`);
      return Number.parseInt(defaults[key]!, 10);
    },
  };
  const tokens = new Map<string, { sub: string; jti: string; ver: number }>();
  const core = {
    db,
    clock,
    config,
    settings,
    tokens: { verify: async (token: string) => tokens.get(token) },
  } as unknown as Core;
  let n = 0;
  return {
    db,
    core,
    quotas: new Quotas(core),
    config,
    defaults,
    tokens,
    setClock(iso, ...later) {
      times = [iso, ...later].map((s) => Date.parse(s));
    },
    async user(limits = {}, role = 'user') {
      n += 1;
      const id = `u${n}`;
      const now = '2030-01-01T00:00:00.000Z';
      await db.run(
        'INSERT INTO users (id, email, password_hash, role, max_ai_messages_per_day, max_ai_tokens_per_day, ' +
          'created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [id, `user${n}@example.test`, '', role, limits.messages ?? null, limits.tokens ?? null, now, now],
      );
      tokens.set(`token-${id}`, { sub: id, jti: `jti-${id}`, ver: 0 });
      return {
        id,
        email: `user${n}@example.test`,
        role,
        is_active: true,
        password_set: false,
        locale: 'en',
        max_chats: 20,
        max_ai_messages_per_day: limits.messages ?? null,
        max_ai_tokens_per_day: limits.tokens ?? null,
        max_storage_mb: null,
        created_at: now,
        updated_at: now,
      };
    },
    async row(userId, day) {
      const r = await db.get<{ messages: number; tokens: number; updated_at: string }>(
        'SELECT messages, tokens, updated_at FROM ai_usage_daily WHERE user_id = ? AND day = ?',
        [userId, day],
      );
      return r && { messages: Number(r.messages), tokens: Number(r.tokens), updated_at: r.updated_at };
    },
  };
}

/** The error `fn` rejects with (fails the test when it resolves). */
async function refusal(t: Test, fn: () => Promise<unknown>): Promise<HttpError> {
  try {
    await fn();
  } catch (e) {
    return e as HttpError;
  }
  t.fail('expected a refusal');
  throw new Error('not refused');
}

t.test('today: the quota day and its end, in the quota time zone', async (t) => {
  const h = await harness(t);
  h.setClock('2030-06-15T10:00:00Z');
  t.same(h.quotas.today(), { day: '2030-06-15', resetsAt: new Date('2030-06-16T00:00:00Z') }, 'from the clock');
  t.same(h.quotas.today(new Date('2030-06-15T23:59:59.999Z')), {
    day: '2030-06-15',
    resetsAt: new Date('2030-06-16T00:00:00Z'),
  });
  t.same(
    h.quotas.today(new Date('2030-06-16T00:00:00Z')),
    { day: '2030-06-16', resetsAt: new Date('2030-06-17T00:00:00Z') },
    'the day ends at its reset instant, not after it',
  );
  t.same(
    h.quotas.today(new Date('2030-06-15T12:00:00Z')),
    { day: '2030-06-15', resetsAt: new Date('2030-06-16T00:00:00Z') },
    'an instant before the last one asked about, on the day before, is on that day',
  );
  t.same(h.quotas.today(new Date('2030-06-15T00:00:00Z')).day, '2030-06-15');
  t.same(h.quotas.today(new Date('2030-06-14T23:59:59.999Z')).day, '2030-06-14', 'back across midnight');
  h.config.quotaTimezone = 'Asia/Tokyo';
  t.same(
    h.quotas.today(new Date('2030-06-14T23:59:59.999Z')),
    { day: '2030-06-15', resetsAt: new Date('2030-06-15T15:00:00Z') },
    'a changed zone is not answered from the last day worked out',
  );
  t.same(h.quotas.today(new Date('2030-06-15T14:59:59Z')).day, '2030-06-15', '23:59:59 in Tokyo');
  t.same(h.quotas.today(new Date('2030-06-15T15:00:00Z')).day, '2030-06-16', 'midnight in Tokyo');
  const a = h.quotas.today(new Date('2030-06-15T16:00:00Z'));
  a.resetsAt.setTime(0);
  t.same(
    h.quotas.today(new Date('2030-06-15T17:00:00Z')).resetsAt,
    new Date('2030-06-16T15:00:00Z'),
    'changing an answer does not change the next one',
  );
});

t.test('limits: the user value when set (0 included), else the default setting', async (t) => {
  const h = await harness(t);
  h.defaults.default_max_ai_messages_per_day = '7';
  h.defaults.default_max_ai_tokens_per_day = '7000';
  t.same(await h.quotas.limits({ max_ai_messages_per_day: null, max_ai_tokens_per_day: null }), {
    messages: 7,
    tokens: 7000,
  });
  t.same(await h.quotas.limits({ max_ai_messages_per_day: 3, max_ai_tokens_per_day: 40 }), {
    messages: 3,
    tokens: 40,
  });
  t.same(await h.quotas.limits({ max_ai_messages_per_day: 0, max_ai_tokens_per_day: 0 }), {
    messages: 0,
    tokens: 0,
  });
});

t.test('usage: zero without a row, the counters of the user and day asked for', async (t) => {
  const h = await harness(t);
  const a = await h.user();
  const b = await h.user();
  t.same(await h.quotas.usage(a.id, '2030-06-15'), { messages: 0, tokens: 0 });
  await h.db.run(
    "INSERT INTO ai_usage_daily (user_id, day, messages, tokens, updated_at) VALUES (?, '2030-06-15', 3, 40, 'x')",
    [a.id],
  );
  t.same(await h.quotas.usage(a.id, '2030-06-15'), { messages: 3, tokens: 40 });
  t.same(await h.quotas.usage(a.id, '2030-06-16'), { messages: 0, tokens: 0 }, 'another day');
  t.same(await h.quotas.usage(b.id, '2030-06-15'), { messages: 0, tokens: 0 }, 'another user');
});

t.test('quota: use against the limits, exceeded at the limit and not below it', async (t) => {
  const h = await harness(t);
  h.setClock('2030-06-15T10:00:00Z');
  const u = await h.user({ messages: 2, tokens: 50 });
  t.same(await h.quotas.quota(u), {
    messages_used: 0,
    tokens_used: 0,
    message_limit: 2,
    token_limit: 50,
    messages_exceeded: false,
    tokens_exceeded: false,
    resets_at: '2030-06-16T00:00:00.000Z',
  });
  await h.quotas.reserve(u);
  await h.quotas.addTokens(u.id, '2030-06-15', 49);
  t.same(await h.quotas.quota(u), {
    messages_used: 1,
    tokens_used: 49,
    message_limit: 2,
    token_limit: 50,
    messages_exceeded: false,
    tokens_exceeded: false,
    resets_at: '2030-06-16T00:00:00.000Z',
  });
  await h.quotas.reserve(u);
  await h.quotas.addTokens(u.id, '2030-06-15', 1);
  const q = await h.quotas.quota(u);
  t.same([q.messages_used, q.tokens_used, q.messages_exceeded, q.tokens_exceeded], [2, 50, true, true]);
  await h.quotas.addTokens(u.id, '2030-06-15', 1);
  t.equal((await h.quotas.quota(u)).tokens_exceeded, true, 'past the limit');
  const v = await h.user({ messages: 1, tokens: 1000 });
  await h.quotas.reserve(v);
  const qv = await h.quotas.quota(v);
  t.same([qv.messages_exceeded, qv.tokens_exceeded], [true, false], 'each flag follows its own counter');
});

t.test('reserve: counts one message while both counters are under their limits', async (t) => {
  const h = await harness(t);
  h.setClock('2030-06-15T10:00:00Z');
  const u = await h.user({ messages: 2, tokens: 50 });
  t.same(await h.quotas.reserve(u), { day: '2030-06-15', resetsAt: new Date('2030-06-16T00:00:00Z') });
  t.same(await h.row(u.id, '2030-06-15'), { messages: 1, tokens: 0, updated_at: '2030-06-15T10:00:00.000Z' });
  h.setClock('2030-06-15T11:00:00Z');
  await h.quotas.reserve(u);
  t.same(await h.row(u.id, '2030-06-15'), { messages: 2, tokens: 0, updated_at: '2030-06-15T11:00:00.000Z' });

  h.setClock('2030-06-15T12:00:00Z');
  const e = await refusal(t, () => h.quotas.reserve(u));
  t.equal(e.status, 429);
  t.equal(e.code, 'message_quota_exceeded');
  t.equal(
    e.message,
    'You have reached your daily limit of 2 AI messages. The limit resets at 2030-06-16T00:00:00.000Z.',
  );
  t.same(e.params, { limit: 2, resets_at: '2030-06-16T00:00:00.000Z' });
  t.same(e.headers, { 'retry-after': String(12 * 3600) });
  t.same(
    await h.row(u.id, '2030-06-15'),
    { messages: 2, tokens: 0, updated_at: '2030-06-15T11:00:00.000Z' },
    'a refusal counts nothing',
  );

  const other = await h.user({ messages: 1, tokens: 50 });
  t.same(await h.quotas.reserve(other), { day: '2030-06-15', resetsAt: new Date('2030-06-16T00:00:00Z') }, 'per user');
  t.equal((await h.row(other.id, '2030-06-15'))?.messages, 1);
});

t.test('reserve: the token limit refuses at the limit; the message limit is reported first', async (t) => {
  const h = await harness(t);
  h.setClock('2030-06-15T23:00:00Z');
  const u = await h.user({ messages: 3, tokens: 50 });
  await h.quotas.reserve(u);
  await h.quotas.addTokens(u.id, '2030-06-15', 49);
  await h.quotas.reserve(u);
  t.equal((await h.row(u.id, '2030-06-15'))?.messages, 2, '49 tokens < 50: allowed');
  await h.quotas.addTokens(u.id, '2030-06-15', 1);
  const e = await refusal(t, () => h.quotas.reserve(u));
  t.equal(e.status, 429);
  t.equal(e.code, 'token_quota_exceeded');
  t.equal(
    e.message,
    'You have reached your daily limit of 50 AI tokens. The limit resets at 2030-06-16T00:00:00.000Z.',
  );
  t.same(e.params, { limit: 50, resets_at: '2030-06-16T00:00:00.000Z' });
  t.same(e.headers, { 'retry-after': '3600' });
  t.equal((await h.row(u.id, '2030-06-15'))?.messages, 2, 'not counted');

  const both = await h.user({ messages: 1, tokens: 5 });
  await h.quotas.reserve(both);
  await h.quotas.addTokens(both.id, '2030-06-15', 5);
  t.equal((await refusal(t, () => h.quotas.reserve(both))).code, 'message_quota_exceeded');

  const zero = await h.user({ messages: 0, tokens: 0 });
  t.equal((await refusal(t, () => h.quotas.reserve(zero))).code, 'message_quota_exceeded', 'a limit of 0');
  const noTokens = await h.user({ messages: 5, tokens: 0 });
  t.equal((await refusal(t, () => h.quotas.reserve(noTokens))).code, 'token_quota_exceeded');
});

t.test('reserve: Retry-After rounds up to whole seconds and is at least 1', async (t) => {
  const h = await harness(t);
  const u = await h.user({ messages: 0 });
  h.setClock('2030-06-15T23:59:58.500Z');
  t.same((await refusal(t, () => h.quotas.reserve(u))).headers, { 'retry-after': '2' });
  h.setClock('2030-06-15T23:59:59.999Z');
  t.same((await refusal(t, () => h.quotas.reserve(u))).headers, { 'retry-after': '1' });
  // The day ends while the refusal is worked out: the wait is not 0 or negative.
  h.setClock('2030-06-16T10:00:00Z', '2030-06-16T10:00:00Z', '2030-06-17T00:00:05Z');
  const e = await refusal(t, () => h.quotas.reserve(u));
  t.same(e.params, { limit: 0, resets_at: '2030-06-17T00:00:00.000Z' });
  t.same(e.headers, { 'retry-after': '1' });
  const v = await h.user({ tokens: 0 });
  h.setClock('2030-06-18T10:00:00Z', '2030-06-18T10:00:00Z', '2030-06-19T00:00:05Z');
  t.same((await refusal(t, () => h.quotas.reserve(v))).headers, { 'retry-after': '1' }, 'for tokens as well');
});

t.test('reserve: a new day starts empty at the reset, in the quota time zone', async (t) => {
  const h = await harness(t);
  h.config.quotaTimezone = 'Asia/Tokyo';
  const u = await h.user({ messages: 1 });
  h.setClock('2030-01-01T14:59:00Z');
  t.same(await h.quotas.reserve(u), { day: '2030-01-01', resetsAt: new Date('2030-01-01T15:00:00Z') });
  const e = await refusal(t, () => h.quotas.reserve(u));
  t.same(e.headers, { 'retry-after': '60' });
  h.setClock('2030-01-01T15:00:00Z');
  t.same((await h.quotas.quota(u)).messages_used, 0);
  t.same(await h.quotas.reserve(u), { day: '2030-01-02', resetsAt: new Date('2030-01-02T15:00:00Z') });
  t.same(await h.quotas.usage(u.id, '2030-01-01'), { messages: 1, tokens: 0 });
  t.same(await h.quotas.usage(u.id, '2030-01-02'), { messages: 1, tokens: 0 });
});

t.test('release gives one message back, never below zero, to that user and day only', async (t) => {
  const h = await harness(t);
  h.setClock('2030-06-15T10:00:00Z');
  const u = await h.user({ messages: 1 });
  const other = await h.user();
  await h.quotas.reserve(u);
  await h.quotas.reserve(other);
  h.setClock('2030-06-15T10:05:00Z');
  await h.quotas.release(u.id, '2030-06-15');
  t.same(await h.row(u.id, '2030-06-15'), { messages: 0, tokens: 0, updated_at: '2030-06-15T10:05:00.000Z' });
  t.equal((await h.row(other.id, '2030-06-15'))?.messages, 1, 'not the other user');
  await h.quotas.reserve(u);
  t.equal((await h.row(u.id, '2030-06-15'))?.messages, 1, 'the released message can be sent again');
  await h.quotas.release(u.id, '2030-06-14');
  t.equal((await h.row(u.id, '2030-06-15'))?.messages, 1, 'another day is not touched');
  await h.quotas.release(u.id, '2030-06-15');
  h.setClock('2030-06-15T10:09:00Z');
  await h.quotas.release(u.id, '2030-06-15');
  t.same(
    await h.row(u.id, '2030-06-15'),
    { messages: 0, tokens: 0, updated_at: '2030-06-15T10:05:00.000Z' },
    'not below 0',
  );
});

t.test('addTokens adds rounded tokens to the day given; nothing for zero or less', async (t) => {
  const h = await harness(t);
  h.setClock('2030-06-15T10:00:00Z');
  const u = await h.user();
  await h.quotas.reserve(u);
  h.setClock('2030-06-15T10:01:00Z');
  await h.quotas.addTokens(u.id, '2030-06-15', 10.6);
  t.same(await h.row(u.id, '2030-06-15'), { messages: 1, tokens: 11, updated_at: '2030-06-15T10:01:00.000Z' });
  h.setClock('2030-06-15T10:02:00Z');
  await h.quotas.addTokens(u.id, '2030-06-15', 0);
  await h.quotas.addTokens(u.id, '2030-06-15', -5);
  t.same(
    await h.row(u.id, '2030-06-15'),
    { messages: 1, tokens: 11, updated_at: '2030-06-15T10:01:00.000Z' },
    'zero and negative amounts do not touch the row',
  );
  await h.quotas.addTokens(u.id, '2030-06-14', 5);
  t.equal(await h.row(u.id, '2030-06-14'), undefined, 'no row is made for a day never reserved');
  const seen: string[] = [];
  const q: Queryable = {
    dialect: 'sqlite',
    all: (sql, p) => h.db.all(sql, p),
    get: (sql, p) => h.db.get(sql, p),
    run: (sql, p) => {
      seen.push(sql);
      return h.db.run(sql, p);
    },
  };
  await h.quotas.addTokens(u.id, '2030-06-15', 1, q);
  t.equal(seen.length, 1, 'through the connection it is given');
  t.equal((await h.row(u.id, '2030-06-15'))?.tokens, 12);
});

t.test('tokensLeft: true below the token limit, false at it', async (t) => {
  const h = await harness(t);
  h.setClock('2030-06-15T10:00:00Z');
  const u = await h.user({ tokens: 10, messages: 0 });
  t.equal(await h.quotas.tokensLeft(u), true, 'no use yet');
  await h.quotas.spendTokens(u.id, 9);
  t.equal(await h.quotas.tokensLeft(u), true, '9 < 10');
  await h.quotas.spendTokens(u.id, 1);
  t.equal(await h.quotas.tokensLeft(u), false, '10 of 10');
  h.setClock('2030-06-16T00:00:00Z');
  t.equal(await h.quotas.tokensLeft(u), true, 'a new day');
  h.defaults.default_max_ai_tokens_per_day = '3';
  const d = await h.user();
  await h.quotas.spendTokens(d.id, 2);
  t.equal(await h.quotas.tokensLeft(d), true, 'the default limit: 2 < 3');
  await h.quotas.spendTokens(d.id, 1);
  t.equal(await h.quotas.tokensLeft(d), false);
});

t.test('spendTokens counts tokens (no message) on today, making the row; nothing for zero or less', async (t) => {
  const h = await harness(t);
  h.setClock('2030-06-15T10:00:00Z');
  const u = await h.user();
  await h.quotas.spendTokens(u.id, 0);
  await h.quotas.spendTokens(u.id, -3);
  t.equal(await h.row(u.id, '2030-06-15'), undefined, 'no row for nothing spent');
  await h.quotas.spendTokens(u.id, 4.4);
  t.same(await h.row(u.id, '2030-06-15'), { messages: 0, tokens: 4, updated_at: '2030-06-15T10:00:00.000Z' });
  h.setClock('2030-06-15T11:00:00Z');
  await h.quotas.spendTokens(u.id, 6);
  t.same(await h.row(u.id, '2030-06-15'), { messages: 0, tokens: 10, updated_at: '2030-06-15T11:00:00.000Z' });
  await h.quotas.reserve(u);
  t.same((await h.row(u.id, '2030-06-15'))?.messages, 1, 'a reservation after it adds to the same row');
});

t.test('addModelUsage counts replies and rounded tokens per user, day and model', async (t) => {
  const h = await harness(t);
  h.setClock('2030-06-15T10:00:00Z');
  const u = await h.user();
  const rows = () =>
    h.db.all('SELECT user_id, day, model, messages, tokens, updated_at FROM ai_usage_models ORDER BY model, day');
  await h.quotas.addModelUsage(u.id, '2030-06-15', 'm1', 10.4);
  h.setClock('2030-06-15T10:01:00Z');
  await h.quotas.addModelUsage(u.id, '2030-06-15', 'm1', -4);
  await h.quotas.addModelUsage(u.id, '2030-06-15', 'm2', 5);
  await h.quotas.addModelUsage(u.id, '2030-06-16', 'm2', 1, h.db);
  t.same(await rows(), [
    { user_id: u.id, day: '2030-06-15', model: 'm1', messages: 2, tokens: 10, updated_at: '2030-06-15T10:01:00.000Z' },
    { user_id: u.id, day: '2030-06-15', model: 'm2', messages: 1, tokens: 5, updated_at: '2030-06-15T10:01:00.000Z' },
    { user_id: u.id, day: '2030-06-16', model: 'm2', messages: 1, tokens: 1, updated_at: '2030-06-15T10:01:00.000Z' },
  ]);
});

t.test('the quota and usage routes', async (t) => {
  const h = await harness(t);
  const log = createLogger({ format: 'json', level: 'fatal' });
  const app = await createServer(
    { corsOrigins: [], forwardedAllowIps: ['*'] } as unknown as Parameters<typeof createServer>[0],
    log.root,
    'test',
    log.credentialPaths,
  );
  t.teardown(() => app.close());
  await quotaRoutes(app, h.core, h.quotas);
  await app.ready();
  const get = async (url: string, token?: string) => {
    const res = await app.inject({
      method: 'GET',
      url,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    return { status: res.statusCode, body: res.json() };
  };

  h.setClock('2030-06-15T10:00:00Z');
  const admin = await h.user({}, 'admin');
  const a = await h.user({ messages: 2, tokens: 50 });
  const b = await h.user();
  await h.quotas.reserve(a);
  await h.quotas.addTokens(a.id, '2030-06-15', 12);
  await h.quotas.addModelUsage(a.id, '2030-06-15', 'zeta', 12);
  await h.quotas.addModelUsage(b.id, '2030-06-15', 'alpha', 3);
  await h.quotas.addModelUsage(a.id, '2030-06-15', 'alpha', 4);
  await h.quotas.addModelUsage(a.id, '2030-06-14', 'alpha', 100);

  t.same(await get('/api/v1/chats/quota', `token-${a.id}`), {
    status: 200,
    body: {
      messages_used: 1,
      tokens_used: 12,
      message_limit: 2,
      token_limit: 50,
      messages_exceeded: false,
      tokens_exceeded: false,
      resets_at: '2030-06-16T00:00:00.000Z',
    },
  });
  t.equal((await get('/api/v1/chats/quota')).status, 401, 'signed in only');

  const today = {
    status: 200,
    body: {
      date: '2030-06-15',
      users: [
        { user_id: admin.id, email: admin.email, messages: 0, tokens: 0 },
        { user_id: a.id, email: a.email, messages: 1, tokens: 12 },
        { user_id: b.id, email: b.email, messages: 0, tokens: 0 },
      ],
      models: [
        { model: 'alpha', messages: 2, tokens: 7 },
        { model: 'zeta', messages: 1, tokens: 12 },
      ],
    },
  };
  t.same(await get('/api/v1/admin/usage?date=2030-06-15', `token-${admin.id}`), today);
  t.same(await get('/api/v1/admin/usage', `token-${admin.id}`), today, 'today by default');
  h.setClock('2030-06-14T10:00:00Z');
  t.same((await get('/api/v1/admin/usage', `token-${admin.id}`)).body.date, '2030-06-14', "the clock's day");
  t.same((await get('/api/v1/admin/usage?date=2030-06-14', `token-${admin.id}`)).body.models, [
    { model: 'alpha', messages: 1, tokens: 100 },
  ]);
  t.equal((await get('/api/v1/admin/usage', `token-${a.id}`)).status, 403, 'administrators only');
  t.equal((await get('/api/v1/admin/usage')).status, 401);

  for (const date of ['2030-6-15', '15.06.2030', '2030-06-15x']) {
    const r = await get(`/api/v1/admin/usage?date=${date}`, `token-${admin.id}`);
    t.same([r.status, r.body.code], [422, 'validation_failed'], `${date}: not YYYY-MM-DD`);
    t.match(r.body.detail, /^The query string is invalid\./, 'refused by the query schema');
  }
  for (const date of ['2030-02-30', '2030-13-01', '2030-00-10']) {
    const r = await get(`/api/v1/admin/usage?date=${date}`, `token-${admin.id}`);
    t.equal(r.status, 422, `${date}: not a calendar date`);
    t.equal(r.body.detail, `The date "${date}" is not a calendar date (YYYY-MM-DD).`);
  }

  const doc = app.swagger() as any;
  const quota = doc.paths['/api/v1/chats/quota'].get;
  t.same(quota.tags, ['assistant']);
  t.equal(quota.responses['200'].description, "Today's use of your AI message and token limits.");
  t.same(Object.keys(quota.responses['200'].content['application/json'].schema.properties), [
    'messages_used',
    'tokens_used',
    'message_limit',
    'token_limit',
    'messages_exceeded',
    'tokens_exceeded',
    'resets_at',
  ]);
  t.equal(quota.responses['200'].content['application/json'].schema.properties.resets_at.format, 'date-time');
  const usage = doc.paths['/api/v1/admin/usage'].get;
  t.same(usage.tags, ['admin']);
  t.equal(usage.responses['200'].description, "One day's AI use per user and per model.");
  const us = usage.responses['200'].content['application/json'].schema;
  t.same(Object.keys(us.properties), ['date', 'users', 'models']);
  t.same(Object.keys(us.properties.users.items.properties), ['user_id', 'email', 'messages', 'tokens']);
  t.same(Object.keys(us.properties.models.items.properties), ['model', 'messages', 'tokens']);
});
