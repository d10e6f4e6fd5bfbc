/**
 * The user's consent to what the assistant proposes to do. When the model calls a tool that acts
 * (`send_notification`, `schedule_message`), the call is stored as `pending` in
 * `assistant_tool_calls` and the reply's stream carries it (`event: tool`, `status:
 * "needs_confirmation"`, with its id, arguments and expiry); the reply then waits for the decision.
 * `POST /api/v1/chats/{chat_id}/tool-calls/{id}` with `{ "approve": true | false }` records it: an
 * approval carries the proposal out at once (the answer says how it went), a refusal does nothing.
 * The waiting reply wakes (at once on this replica, within POLL_MS on another, since the decision
 * is in the database), and the model continues with the outcome. A proposal nobody answers within
 * CONFIRM_TTL_MS expires; one whose reply was stopped is cancelled; neither does anything.
 */
import Type from 'typebox';
import { caller, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import { Database as Db } from '../db/database.ts';
import { insertRow } from '../db/rows.ts';
import { newId } from '../http/ids.ts';
import { conflict, notFound } from '../http/problem.ts';
import { errors, ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import { ChatParams, ownChat } from './chats.ts';
import { type ToolCallOutcome, ToolCallOutcomeView } from './definitions/tool-call.ts';
import { ToolInputError } from './event-search.ts';
import { carryOut } from './lab-actions.ts';

/** How long a proposal waits for the user. */
export const CONFIRM_TTL_MS = 10 * 60_000;
/** How often a waiting reply looks at its proposal (a decision taken on another replica, the expiry). */
const POLL_MS = 1000;
/** An approval whose outcome was never written (its replica died while carrying it out) is given up after this. */
const CARRY_GRACE_MS = 60_000;

export type Confirmation = 'approved' | 'refused' | 'expired';

/** How a proposal ended, as the model reads it back and the client shows it. */
export interface Decided {
  ok: boolean;
  confirmation: Confirmation;
  result: Record<string, unknown>;
}

interface CallRow {
  id: string;
  user_id: string;
  chat_id: string;
  name: string;
  arguments: unknown;
  status: string;
  result: unknown;
  expires_at: string;
}

const NOTES = {
  refused: 'The user declined this proposal: nothing was sent or scheduled.',
  expired: 'The user did not answer within 10 minutes: nothing was sent or scheduled.',
  cancelled: 'The reply was stopped before the user answered: nothing was sent or scheduled.',
  lost: 'The outcome of the approved proposal is unknown (the service was interrupted while carrying it out).',
};

/** A JSON column that holds an object (a proposal, an outcome), read back; anything else is an empty object. */
function jsonObject(raw: unknown): Record<string, unknown> {
  const v = Db.json<unknown>(raw, {});
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

export class Consents {
  private core: Core;
  private waiters = new Map<string, Set<() => void>>();

  constructor(core: Core) {
    this.core = core;
  }

  private now(): Date {
    return this.core.clock.now();
  }

  /** Stores a proposal of the model as pending; returns its id and when it expires. */
  async propose(p: {
    userId: string;
    chatId: string;
    messageId: string;
    name: string;
    proposal: Record<string, unknown>;
  }): Promise<{ id: string; expires_at: string }> {
    const id = newId();
    const now = this.now();
    const expires = new Date(now.getTime() + CONFIRM_TTL_MS).toISOString();
    await insertRow(this.core.db, 'assistant_tool_calls', {
      id,
      user_id: p.userId,
      chat_id: p.chatId,
      message_id: p.messageId,
      name: p.name,
      arguments: p.proposal,
      status: 'pending',
      expires_at: expires,
      created_at: now.toISOString(),
    });
    return { id, expires_at: expires };
  }

  private notify(id: string): void {
    for (const fn of this.waiters.get(id) ?? []) fn();
  }

  /** Resolves after POLL_MS, on a decision taken here, or when `signal` aborts. */
  private pause(id: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiters.get(id) ?? new Set();
      this.waiters.set(id, set);
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        set.delete(done);
        if (!set.size) this.waiters.delete(id);
        resolve();
      };
      const timer = setTimeout(done, signal.aborted ? 50 : POLL_MS);
      set.add(done);
      if (!signal.aborted) signal.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * Waits until the proposal `id` is decided, expires, or `signal` aborts (the reply was stopped:
   * a pending proposal is then cancelled). Never throws.
   */
  async outcome(id: string, signal: AbortSignal): Promise<Decided> {
    const db = this.core.db;
    for (;;) {
      const row = await db.get<CallRow>('SELECT * FROM assistant_tool_calls WHERE id = ?', [id]);
      if (!row) return { ok: false, confirmation: 'expired', result: { status: 'cancelled', note: NOTES.cancelled } };
      const result = jsonObject(row.result);
      if (row.status === 'done') return { ok: true, confirmation: 'approved', result };
      if (row.status === 'failed') return { ok: false, confirmation: 'approved', result };
      if (row.status === 'refused')
        return { ok: false, confirmation: 'refused', result: { status: 'refused', note: NOTES.refused } };
      if (row.status === 'expired')
        return { ok: false, confirmation: 'expired', result: { status: 'expired', note: NOTES.expired } };
      if (row.status === 'cancelled')
        return { ok: false, confirmation: 'expired', result: { status: 'cancelled', note: NOTES.cancelled } };
      const now = this.now();
      if (row.status === 'pending') {
        if (now.getTime() >= Date.parse(row.expires_at)) {
          await db.run(
            `UPDATE assistant_tool_calls SET status = 'expired', decided_at = ? WHERE id = ? AND status = 'pending'`,
            [now.toISOString(), id],
          );
          continue;
        }
        if (signal.aborted) {
          await db.run(
            `UPDATE assistant_tool_calls SET status = 'cancelled', decided_at = ? WHERE id = ? AND status = 'pending'`,
            [now.toISOString(), id],
          );
          continue;
        }
      } else if (row.status === 'approved' && now.getTime() > Date.parse(row.expires_at) + CARRY_GRACE_MS) {
        return { ok: false, confirmation: 'approved', result: { status: 'failed', error: NOTES.lost } };
      }
      await this.pause(id, signal);
    }
  }

  /**
   * Records the caller's decision on a pending proposal of their chat, carrying an approved one
   * out. 404 for another user's chat or call; 409 `tool_call_expired` once it expired or its reply
   * stopped, `tool_call_decided` once it was answered.
   */
  async decide(userId: string, chatId: string, id: string, approve: boolean): Promise<ToolCallOutcome> {
    const db = this.core.db;
    await ownChat(db, userId, chatId);
    const row = await db.get<CallRow>(
      'SELECT * FROM assistant_tool_calls WHERE id = ? AND chat_id = ? AND user_id = ?',
      [id, chatId, userId],
    );
    if (!row) throw notFound('Tool call');
    const now = this.now().toISOString();
    if (row.status === 'pending' && row.expires_at <= now) {
      await db.run(
        `UPDATE assistant_tool_calls SET status = 'expired', decided_at = ? WHERE id = ? AND status = 'pending'`,
        [now, id],
      );
      this.notify(id);
    }
    const closed = async () => {
      const r = await db.get<CallRow>('SELECT status FROM assistant_tool_calls WHERE id = ?', [id]);
      const status = r?.status ?? 'cancelled';
      if (status === 'expired' || status === 'cancelled') {
        return conflict(
          'This proposal is no longer waiting for an answer (it expired after 10 minutes or its reply was ' +
            'stopped); nothing was done. Ask again.',
          'tool_call_expired',
          { status },
        );
      }
      return conflict(`This proposal was already answered (${status}).`, 'tool_call_decided', { status });
    };
    if (!approve) {
      const changed = await db.run(
        `UPDATE assistant_tool_calls SET status = 'refused', decided_at = ? WHERE id = ? AND status = ` +
          `'pending' AND expires_at > ?`,
        [now, id, now],
      );
      if (changed !== 1) throw await closed();
      this.notify(id);
      return { id, name: row.name, status: 'refused', result: null };
    }
    const taken = await db.run(
      `UPDATE assistant_tool_calls SET status = 'approved', decided_at = ? WHERE id = ? AND status = ` +
        `'pending' AND expires_at > ?`,
      [now, id, now],
    );
    if (taken !== 1) throw await closed();
    let status: ToolCallOutcome['status'] = 'done';
    let result: Record<string, unknown>;
    try {
      result = await carryOut(this.core, userId, row.name, jsonObject(row.arguments));
    } catch (err) {
      status = 'failed';
      if (!(err instanceof ToolInputError))
        this.core.logs.get('assistant').error({ err, tool: row.name }, 'carrying out an approved proposal failed');
      result = {
        status: 'failed',
        error: err instanceof ToolInputError ? err.message : 'It could not be carried out; the error was logged.',
      };
    }
    await db.run('UPDATE assistant_tool_calls SET status = ?, result = ? WHERE id = ?', [status, result, id]);
    this.notify(id);
    return { id, name: row.name, status, result };
  }
}

const CallParams = Type.Object({ ...ChatParams.properties, id: Type.String({ format: 'uuid' }) });
const DecisionBody = Type.Object({ approve: Type.Boolean() }, { additionalProperties: false });

/** `POST /api/v1/chats/{chat_id}/tool-calls/{id}`: the user's answer to a proposal of the assistant. */
export async function consentRoutes(app: App, core: Core, consents: Consents): Promise<void> {
  app.post(
    '/api/v1/chats/:chat_id/tool-calls/:id',
    {
      schema: {
        tags: ['assistant'],
        summary:
          'Approve or refuse an action the assistant proposed in a reply (send a notification, schedule a message)',
        description:
          'The reply that proposed it waits (its stream showed `event: tool` with `status: ' +
          '"needs_confirmation"` and this id) and continues with the outcome. `approve: true` carries it ' +
          'out at once: `status` is `done` (with `result`: what was sent or scheduled) or `failed` ' +
          '(`result.error` says why, for example a target that was deleted meanwhile). `approve: false` ' +
          'does nothing (`status: "refused"`). 409 `tool_call_expired` when nobody answered within 10 ' +
          'minutes or the reply was stopped, `tool_call_decided` when it was already answered; another ' +
          "user's chat or call is a 404.",
        params: CallParams,
        body: DecisionBody,
        response: {
          ...ok(
            'The outcome: `status` `done` (with `result`), `failed` (`result.error` says why) or `refused`.',
            ToolCallOutcomeView,
          ),
          ...errors([409, 'The proposal expired or was answered already (`tool_call_expired`, `tool_call_decided`).']),
        },
      },
      preHandler: requireUser(core),
    },
    async (req) => {
      const p = req.params;
      return consents.decide(caller(req).id, p.chat_id, p.id, req.body.approve);
    },
  );
}
