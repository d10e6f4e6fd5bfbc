import Type from 'typebox';
import { caller, requireAdmin, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { HttpError, unprocessable } from '../http/problem.ts';
import { ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import type { PublicUser } from '../users/users.ts';
import { dayKey, nextDayStart } from './day.ts';
import { AdminUsageView, QuotaView } from './definitions/usage.ts';

/** Today's usage against the effective limits, as the quota endpoint returns it. */
export interface Quota {
  messages_used: number;
  tokens_used: number;
  message_limit: number;
  token_limit: number;
  messages_exceeded: boolean;
  tokens_exceeded: boolean;
  resets_at: string;
}

/** The day a request belongs to and when it ends. */
export interface QuotaDay {
  day: string;
  resetsAt: Date;
}

/**
 * Daily AI quotas. One table, `ai_usage_daily` keyed (user_id, day), is both what enforcement
 * checks and what the admin usage view reads, so the two always agree.
 */
export class Quotas {
  private core: Core;
  /** The last day computed, reused until it ends (working a day out in a zone takes several Intl calls). */
  private last?: { zone: string; from: number; day: string; resetsAt: Date };
  constructor(core: Core) {
    this.core = core;
  }

  today(at: Date = this.core.clock.now()): QuotaDay {
    const zone = this.core.config.quotaTimezone;
    const t = at.getTime();
    const c = this.last;
    // Any instant from one known to lie in a day up to that day's end lies in the same day.
    if (c && c.zone === zone && t >= c.from && t < c.resetsAt.getTime())
      return { day: c.day, resetsAt: new Date(c.resetsAt) };
    const day = dayKey(at, zone);
    const resetsAt = nextDayStart(at, zone);
    this.last = { zone, from: t, day, resetsAt };
    return { day, resetsAt: new Date(resetsAt) };
  }

  /** Effective limits: the user's own non-null value, else the default setting. */
  async limits(
    user: Pick<PublicUser, 'max_ai_messages_per_day' | 'max_ai_tokens_per_day'>,
  ): Promise<{ messages: number; tokens: number }> {
    return {
      messages: user.max_ai_messages_per_day ?? (await this.core.settings.getInt('default_max_ai_messages_per_day')),
      tokens: user.max_ai_tokens_per_day ?? (await this.core.settings.getInt('default_max_ai_tokens_per_day')),
    };
  }

  async usage(userId: string, day: string, q: Queryable = this.core.db): Promise<{ messages: number; tokens: number }> {
    const row = await q.get<{ messages: number | string; tokens: number | string }>(
      'SELECT messages, tokens FROM ai_usage_daily WHERE user_id = ? AND day = ?',
      [userId, day],
    );
    return { messages: Number(row?.messages ?? 0), tokens: Number(row?.tokens ?? 0) };
  }

  async quota(user: PublicUser): Promise<Quota> {
    const { day, resetsAt } = this.today();
    const [limits, used] = await Promise.all([this.limits(user), this.usage(user.id, day)]);
    return {
      messages_used: used.messages,
      tokens_used: used.tokens,
      message_limit: limits.messages,
      token_limit: limits.tokens,
      messages_exceeded: used.messages >= limits.messages,
      tokens_exceeded: used.tokens >= limits.tokens,
      resets_at: resetsAt.toISOString(),
    };
  }

  /**
   * Counts one message against today's quota, atomically: a single conditional UPDATE only passes
   * while both counters are under their limits, so concurrent sends cannot overshoot the message
   * limit. Throws 429 (message limit first, then tokens) when refused.
   */
  async reserve(user: PublicUser): Promise<QuotaDay> {
    return this.reserveIn(this.core.db, user.id, await this.limits(user));
  }

  /**
   * `reserve` with the limits already read, in `q`: the message route counts the message in the transaction that
   * stores the question, so both are one commit and a refused or failed question leaves no count behind.
   */
  async reserveIn(q: Queryable, userId: string, limits: { messages: number; tokens: number }): Promise<QuotaDay> {
    const today = this.today();
    const now = this.core.clock.now().toISOString();
    await q.run(
      'INSERT INTO ai_usage_daily (user_id, day, messages, tokens, updated_at) VALUES (?, ?, 0, 0, ?) ON ' +
        'CONFLICT (user_id, day) DO NOTHING',
      [userId, today.day, now],
    );
    const changed = await q.run(
      'UPDATE ai_usage_daily SET messages = messages + 1, updated_at = ? WHERE user_id = ? AND day = ? AND ' +
        'messages < ? AND tokens < ?',
      [now, userId, today.day, limits.messages, limits.tokens],
    );
    if (changed === 1) return today;
    const used = await this.usage(userId, today.day, q);
    const resets = today.resetsAt.toISOString();
    const wait = (today.resetsAt.getTime() - this.core.clock.now().getTime()) / 1000;
    if (used.messages >= limits.messages) {
      throw new HttpError(
        429,
        'message_quota_exceeded',
        `You have reached your daily limit of ${limits.messages} AI messages. The limit resets at ${resets}.`,
        {
          params: { limit: limits.messages!, resets_at: resets },
          headers: { 'retry-after': String(Math.max(1, Math.ceil(wait))) },
        },
      );
    }
    throw new HttpError(
      429,
      'token_quota_exceeded',
      `You have reached your daily limit of ${limits.tokens} AI tokens. The limit resets at ${resets}.`,
      {
        params: { limit: limits.tokens!, resets_at: resets },
        headers: { 'retry-after': String(Math.max(1, Math.ceil(wait))) },
      },
    );
  }

  /** Gives a reserved message back when the model never answered (nothing was spent). */
  async release(userId: string, day: string, q: Queryable = this.core.db): Promise<void> {
    await q.run(
      'UPDATE ai_usage_daily SET messages = messages - 1, updated_at = ? WHERE user_id = ? AND day = ? AND ' +
        'messages > 0',
      [this.core.clock.now().toISOString(), userId, day],
    );
  }

  /** Adds the tokens one exchange spent, to the day the exchange was reserved on. */
  async addTokens(userId: string, day: string, tokens: number, q: Queryable = this.core.db): Promise<void> {
    if (tokens <= 0) return;
    await q.run('UPDATE ai_usage_daily SET tokens = tokens + ?, updated_at = ? WHERE user_id = ? AND day = ?', [
      Math.round(tokens),
      this.core.clock.now().toISOString(),
      userId,
      day,
    ]);
  }

  /** True while the user has tokens left today (the AI digest of a scheduled action asks before calling the model). */
  async tokensLeft(
    user: Pick<PublicUser, 'id' | 'max_ai_messages_per_day' | 'max_ai_tokens_per_day'>,
  ): Promise<boolean> {
    const [limits, used] = await Promise.all([this.limits(user), this.usage(user.id, this.today().day)]);
    return used.tokens < limits.tokens;
  }

  /**
   * Tokens the service spent for the user outside a chat (the AI digest): counted against today's token quota, no
   * message.
   */
  async spendTokens(userId: string, tokens: number): Promise<void> {
    if (tokens <= 0) return;
    const { day } = this.today();
    await this.core.db.run(
      'INSERT INTO ai_usage_daily (user_id, day, messages, tokens, updated_at) VALUES (?, ?, 0, 0, ?) ON ' +
        'CONFLICT (user_id, day) DO NOTHING',
      [userId, day, this.core.clock.now().toISOString()],
    );
    await this.addTokens(userId, day, tokens);
  }

  /** Records one reply and its tokens against the model that wrote it (the admin usage view's per-model figures). */
  async addModelUsage(
    userId: string,
    day: string,
    model: string,
    tokens: number,
    q: Queryable = this.core.db,
  ): Promise<void> {
    await q.run(
      `INSERT INTO ai_usage_models (user_id, day, model, messages, tokens, updated_at) VALUES (?, ?, ?, 1, ?, ?)
      ON CONFLICT (user_id, day, model) DO UPDATE SET messages = ai_usage_models.messages + 1, tokens =
      ai_usage_models.tokens + excluded.tokens, updated_at = excluded.updated_at`,
      [userId, day, model, Math.max(0, Math.round(tokens)), this.core.clock.now().toISOString()],
    );
  }
}

/** `GET /api/v1/chats/quota` and `GET /api/v1/admin/usage`. */
export async function quotaRoutes(app: App, core: Core, quotas: Quotas): Promise<void> {
  app.get(
    '/api/v1/chats/quota',
    {
      schema: {
        tags: ['assistant'],
        response: { ...ok("Today's use of your AI message and token limits.", QuotaView) },
      },
      preHandler: requireUser(core),
    },
    async (req) => quotas.quota(caller(req)),
  );

  app.get(
    '/api/v1/admin/usage',
    {
      schema: {
        tags: ['admin'],
        querystring: Type.Object({ date: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' })) }),
        response: { ...ok("One day's AI use per user and per model.", AdminUsageView) },
      },
      preHandler: requireAdmin(core),
    },
    async (req) => {
      const date = req.query.date ?? quotas.today().day;
      const parsed = new Date(`${date}T00:00:00Z`);
      if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== date)
        throw unprocessable(`The date "${date}" is not a calendar date (YYYY-MM-DD).`);
      const rows = await core.db.all<{
        user_id: string;
        email: string;
        messages: number | string | null;
        tokens: number | string | null;
      }>(
        `SELECT u.id AS user_id, u.email, a.messages, a.tokens FROM users u
       LEFT JOIN ai_usage_daily a ON a.user_id = u.id AND a.day = ? ORDER BY u.email`,
        [date],
      );
      const models = await core.db.all<{ model: string; messages: number | string; tokens: number | string }>(
        'SELECT model, SUM(messages) AS messages, SUM(tokens) AS tokens FROM ai_usage_models WHERE day = ? ' +
          'GROUP BY model ORDER BY model',
        [date],
      );
      return {
        date,
        users: rows.map((r) => ({
          user_id: r.user_id,
          email: r.email,
          messages: Number(r.messages ?? 0),
          tokens: Number(r.tokens ?? 0),
        })),
        models: models.map((m) => ({ model: m.model, messages: Number(m.messages), tokens: Number(m.tokens) })),
      };
    },
  );
}
