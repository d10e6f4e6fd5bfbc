import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { caller, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { newId } from '../http/ids.ts';
import { conflict, HttpError, unavailable, unprocessable } from '../http/problem.ts';
import { errors, file } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import type { PublicUser } from '../users/users.ts';
import { assembleContext, messageTokens } from './assemble.ts';
import { ChatParams, type ChatRow, ownChat } from './chats.ts';
import type { Consents } from './consent.ts';
import type { ToolEvent } from './exchange.ts';
import { runExchange } from './exchange.ts';
import { labTools } from './lab-tools.ts';
import {
  type Attachment,
  branchTail,
  chatMessage,
  documentAttachments,
  hideAfter,
  insertMessage,
  type MessageRow,
  type NewMessage,
  publicMessage,
} from './messages.ts';
import { ModelClient } from './model.ts';
import type { ModelStream } from './model-stream.ts';
import type { Models } from './models.ts';
import { bool } from './paths.ts';
import type { Quotas } from './quotas.ts';
import type { Reports } from './reports.ts';
import { searchableBy } from './search.ts';
import { SseStream } from './sse.ts';
import { generateTitle } from './titles.ts';
import { assistantTools, SEARCH_DOCUMENTS } from './tools.ts';
import { GateFull, gate } from './turns.ts';

export const MAX_CONTENT = 32_000;

/** The answers every route that starts a reply shares, beside its own. */
const REPLY_ERRORS: [number, string][] = [
  [429, 'Over your daily AI message or token limit.'],
  [502, 'The AI model endpoint failed or refused the request.'],
  [
    503,
    'The assistant is not configured (no AI_API_KEY), the model provider is rate limiting, or too many messages are ' +
      'waiting to start (`assistant_busy`).',
  ],
];

/**
 * The question as the model reads it: with the documents it carries named after its text, so that the model knows
 * to search them (the stored message keeps only what the user wrote).
 */
function withDocuments(m: MessageRow): MessageRow {
  const docs = documentAttachments(m);
  if (!docs.length) return m;
  const names = docs.map((d) => `"${d.name}"`).join(', ');
  return {
    ...m,
    content:
      `${m.content}\n\n[Attached documents: ${names}. ` +
      `Their text is in the user's documents: search it with ${SEARCH_DOCUMENTS}.]`,
  };
}
/** The most documents one message may carry. */
export const MAX_MESSAGE_DOCUMENTS = 10;
/**
 * `documents`: ids of the caller's documents (uploaded with `POST /api/v1/documents`) the message carries; they are
 * shown as chips on it and the model is told to search them.
 */
const Body = Type.Object(
  {
    content: Type.String({ minLength: 1, maxLength: MAX_CONTENT }),
    documents: Type.Optional(
      Type.Array(Type.String({ format: 'uuid' }), { maxItems: MAX_MESSAGE_DOCUMENTS, uniqueItems: true }),
    ),
  },
  { additionalProperties: false },
);
const MessageParams = Type.Object({
  chat_id: Type.String({ format: 'uuid' }),
  message_id: Type.String({ format: 'uuid' }),
});

/**
 * `POST /api/v1/chats/{chat_id}/messages`. Before streaming: 404 for a chat that is not the
 * caller's, 422 for empty or over-long content, 503 without AI_API_KEY, 429 over a quota (the
 * message counted atomically), 502/503 when the model endpoint fails (the user message kept,
 * an assistant message with status `error` recorded, the message count given back). Then an
 * SSE stream: start, delta…, tool…, done | error. A client that leaves aborts the model call and
 * the partial reply is saved as `interrupted` with the tokens spent. An archived chat refuses
 * with 409 `chat_archived`. `…/messages/{id}/regenerate` answers the same question again (the
 * earlier reply becomes an alternative; a failed empty one is replaced), `…/messages/{id}/edit`
 * asks an edited question from the same point (what followed is kept as the previous branch);
 * both stream like a new message and count against the quota the same way.
 */
/** Replies being streamed, so shutdown can stop them and wait until their messages are saved. */
export class InFlight {
  private running = new Map<AbortController, Promise<void>>();
  track(controller: AbortController, done: Promise<void>): void {
    this.running.set(controller, done);
    void done.finally(() => this.running.delete(controller));
  }
  /** Aborts what is still running (it is saved as interrupted) and waits for it, at most `ms`. */
  async drain(ms = 5000): Promise<void> {
    for (const c of this.running.keys()) c.abort();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.running.values()]),
      new Promise((r) => {
        timer = setTimeout(r, ms);
      }),
    ]);
    clearTimeout(timer);
  }
}

export async function sendRoutes(
  app: App,
  core: Core,
  deps: {
    quotas: Quotas;
    model: ModelClient;
    reports: Reports;
    inflight: InFlight;
    models: Models;
    consents?: Consents;
  },
): Promise<void> {
  const { quotas, model, reports, inflight, models, consents } = deps;
  const log = core.logs.get('assistant');
  const produces = ['text/event-stream', 'application/problem+json'];

  /**
   * The checks every reply starts with, in order: the chat is the caller's (404), not archived
   * (409 `chat_archived`), the assistant is configured (503).
   */
  const begin = async (req: FastifyRequest & { params: { chat_id: string } }, reply: FastifyReply) => {
    // Setting a reply up and saving it wait their turn, so a burst of messages cannot stall the streams already
    // running (turns.ts). A client that leaves while its message waits here leaves nothing behind.
    if (!(await admitted(reply))) return undefined;
    const user = caller(req);
    const chat = await ownChat(core.db, user.id, req.params.chat_id);
    if (bool(chat.is_archived))
      throw conflict('This chat is archived and read-only; unarchive it to continue.', 'chat_archived');
    if (!model.configured)
      throw unavailable(
        'The assistant is not configured: the server has no AI_API_KEY. Ask the administrator to set it.',
        'assistant_not_configured',
      );
    return { user, chat };
  };
  /** Waits for the opening's turn; false when the client left meanwhile (its connection is then closed). */
  const admitted = async (reply: FastifyReply): Promise<boolean> => {
    let wait: Promise<void> | undefined;
    let left: AbortController | undefined;
    let onClose: (() => void) | undefined;
    try {
      wait = gate.enter('open', (left = new AbortController()).signal);
    } catch (err) {
      if (err instanceof GateFull)
        throw unavailable(
          'The assistant has too many messages waiting to start; try again in a moment.',
          'assistant_busy',
        );
      throw err;
    }
    if (!wait) return true;
    reply.raw.once('close', (onClose = () => left.abort()));
    try {
      await wait;
      return true;
    } catch {
      reply.hijack();
      reply.raw.destroy();
      return false;
    } finally {
      reply.raw.off('close', onClose);
    }
  };
  const blank = (content: string) => {
    if (!content.trim())
      throw unprocessable('The message is empty; write something to send.', [
        { path: 'body/content', message: 'must not be blank' },
      ]);
  };

  /** The caller's documents by id, as a message's attachments; 404 `document_not_found` for one that is not theirs. */
  const documentsOf = async (userId: string, ids: string[] | undefined): Promise<Attachment[]> => {
    if (!ids?.length) return [];
    const rows = await core.db.all<{ id: string; filename: string }>(
      `SELECT id, filename FROM documents WHERE user_id = ? AND id IN (${ids.map(() => '?').join(', ')})`,
      [userId, ...ids],
    );
    const names = new Map(rows.map((r) => [r.id, r.filename]));
    const missing = ids.find((id) => !names.has(id));
    if (missing)
      throw new HttpError(404, 'document_not_found', `Document ${missing} was not found.`, {
        params: { document_id: missing },
      });
    return ids.map((id) => ({ type: 'document', document_id: id, name: names.get(id) ?? '' }));
  };

  app.post(
    '/api/v1/chats/:chat_id/messages',
    {
      schema: {
        tags: ['assistant'],
        summary: 'Send a message; the reply streams back as server-sent events',
        params: ChatParams,
        body: Body,
        produces,
        response: {
          ...file(
            'The reply as server-sent events: `start`, `delta`…, `tool`…, then `done` or `error`.',
            'text/event-stream',
          ),
          ...errors(
            [404, 'A document named in `documents` is not one of yours (`document_not_found`).'],
            [409, 'The chat is archived (`chat_archived`).'],
            ...REPLY_ERRORS,
          ),
        },
      },
      preHandler: requireUser(core),
    },
    async (req, reply) => {
      const { content } = req.body;
      const begun = await begin(req, reply);
      if (!begun) return;
      const { user, chat } = begun;
      blank(content);
      const attachments = await documentsOf(user.id, req.body.documents);
      return respond(reply, user, chat, async (q, now) => {
        const parent = await branchTail(q, chat.id);
        return insertMessage(q, {
          chat_id: chat.id,
          user_id: user.id,
          role: 'user',
          content,
          created_at: now,
          parent_id: parent ?? null,
          attachments,
        });
      });
    },
  );

  /**
   * A new reply to the same question; the reply it replaces stays as an alternative (a failed empty one is dropped).
   */
  app.post(
    '/api/v1/chats/:chat_id/messages/:message_id/regenerate',
    {
      schema: {
        tags: ['assistant'],
        summary: 'Write another reply to the same question (the earlier reply is kept as an alternative)',
        params: MessageParams,
        produces,
        response: {
          ...file(
            'The reply as server-sent events: `start`, `delta`…, `tool`…, then `done` or `error`.',
            'text/event-stream',
          ),
          ...errors(
            [
              409,
              'The chat is archived, or the message is not a reply to a question (`chat_archived`, `not_regenerable`).',
            ],
            ...REPLY_ERRORS,
          ),
        },
      },
      preHandler: requireUser(core),
    },
    async (req, reply) => {
      const begun = await begin(req, reply);
      if (!begun) return;
      const { user, chat } = begun;
      const target = await chatMessage(core.db, chat.id, req.params.message_id);
      if (target.role !== 'assistant' || !target.parent_id)
        throw new HttpError(
          409,
          'not_regenerable',
          'Only a reply to a question can be regenerated; pick an assistant message.',
        );
      const question = await chatMessage(core.db, chat.id, target.parent_id);
      if (question.role !== 'user')
        throw new HttpError(
          409,
          'not_regenerable',
          'Only a reply to a question can be regenerated; pick an assistant message.',
        );
      return respond(reply, user, chat, async (q) => {
        await hideAfter(q, chat.id, question.id);
        // A failed reply with no text is not worth keeping as an alternative: the retry replaces it.
        if (target.status === 'error' && !target.content) {
          const child = await q.get('SELECT id FROM chat_messages WHERE parent_id = ? LIMIT 1', [target.id]);
          if (!child) await q.run('DELETE FROM chat_messages WHERE id = ?', [target.id]);
        }
        await q.run('UPDATE chat_messages SET active = ? WHERE id = ?', [true, question.id]);
        return question;
      });
    },
  );

  /** The question asked again in other words: a new branch from the same point; the old one is kept. */
  app.post(
    '/api/v1/chats/:chat_id/messages/:message_id/edit',
    {
      schema: {
        tags: ['assistant'],
        summary: 'Edit a question and resend it (what followed it is kept as the previous branch)',
        params: MessageParams,
        body: Body,
        produces,
        response: {
          ...file(
            'The reply as server-sent events: `start`, `delta`…, `tool`…, then `done` or `error`.',
            'text/event-stream',
          ),
          ...errors(
            [409, 'The chat is archived, or the message is not your own (`chat_archived`, `not_editable`).'],
            ...REPLY_ERRORS,
          ),
        },
      },
      preHandler: requireUser(core),
    },
    async (req, reply) => {
      const { content } = req.body;
      const begun = await begin(req, reply);
      if (!begun) return;
      const { user, chat } = begun;
      blank(content);
      const target = await chatMessage(core.db, chat.id, req.params.message_id);
      if (target.role !== 'user') throw new HttpError(409, 'not_editable', 'Only your own messages can be edited.');
      // Without `documents`, the edited question keeps the ones it carried.
      const attachments =
        req.body.documents === undefined ? documentAttachments(target) : await documentsOf(user.id, req.body.documents);
      return respond(reply, user, chat, async (q, now) => {
        await hideAfter(q, chat.id, target.parent_id);
        return insertMessage(q, {
          chat_id: chat.id,
          user_id: user.id,
          role: 'user',
          content,
          created_at: now,
          parent_id: target.parent_id,
          attachments,
        });
      });
    },
  );

  /**
   * Counts the message against the quota and sets the question up with `question` (both in one
   * transaction), and streams the reply to it. See the route comment above for the outcomes.
   */
  async function respond(
    reply: FastifyReply,
    user: PublicUser,
    chat: ChatRow,
    question: (q: Queryable, now: string) => Promise<MessageRow>,
  ) {
    const now = () => core.clock.now().toISOString();
    const limits = await quotas.limits(user);
    // The message is counted, the question stored and the chat touched in one transaction (one commit to wait for):
    // a refused count (429) or a failed question leaves nothing behind.
    const { day, userMessage } = await core.db.tx(async (q) => {
      const day = await quotas.reserveIn(q, user.id, limits);
      const userMessage = await question(q, now());
      await q.run('UPDATE chats SET updated_at = ? WHERE id = ?', [now(), chat.id]);
      return { day, userMessage };
    });
    const assistantId = newId();
    const controller = new AbortController();
    let finished = false;
    const onClose = () => {
      if (!finished) controller.abort();
    };
    reply.raw.on('close', onClose);
    // The context and the model request wait their turn too (a group commit resolves many openings at once). A client
    // that leaves meanwhile goes on at once: the aborted model call below records its reply as interrupted.
    await gate.enter('setup', controller.signal)?.catch(() => undefined);
    const [context, modelName, searchable, relayTools] = await Promise.all([
      assembleContext(core, user.id, chat, withDocuments(userMessage), user.locale),
      models.forChat(chat.model ?? null),
      searchableBy(core.db, user.id),
      labTools(core, user, { chatId: chat.id, messageId: assistantId, consents }),
    ]).catch((err: unknown) => {
      finished = true;
      reply.raw.off('close', onClose);
      throw err;
    });
    const base = {
      id: assistantId,
      chat_id: chat.id,
      user_id: user.id,
      role: 'assistant',
      context_version: context.contextVersion,
      parent_id: userMessage.id,
      model: modelName,
    } satisfies Partial<NewMessage>;

    const tools = assistantTools(reports, user, log, core.db, searchable, relayTools);
    const maxToolRounds = core.config.ai.maxToolRounds;
    /** The reply's finished tool calls, stored with it. */
    const calls: ToolEvent[] = [];

    let first: ModelStream;
    try {
      first = await model.open(
        context.messages,
        maxToolRounds > 0 ? tools.definitions : [],
        controller.signal,
        modelName,
      );
    } catch (err) {
      finished = true;
      reply.raw.off('close', onClose);
      if (ModelClient.isAbort(err, controller.signal)) {
        // The client left before the model answered; the prompt may already have been processed.
        const prompt = context.messages.reduce((n, m) => n + messageTokens(m), 0);
        // The reply and the tokens it cost are recorded together, so usage and history always agree.
        await core.db.tx(async (q) => {
          await insertMessage(q, {
            ...base,
            content: '',
            status: 'interrupted',
            usage: { prompt_tokens: prompt, completion_tokens: 0, total_tokens: prompt },
            usage_estimated: true,
            created_at: now(),
          });
          await quotas.addTokens(user.id, day.day, prompt, q);
          await quotas.addModelUsage(user.id, day.day, modelName, prompt, q);
        });
        reply.hijack();
        reply.raw.destroy();
        return;
      }
      const failure = model.failure(err);
      log.warn({ code: failure.code, status: failure.status }, 'model call failed before streaming');
      // Nothing was produced, so the message does not count against the day: the failed reply is recorded and the
      // count given back in one transaction.
      await core.db.tx(async (q) => {
        await insertMessage(q, {
          ...base,
          content: '',
          status: 'error',
          error: failure.message,
          created_at: now(),
        });
        await quotas.release(user.id, day.day, q);
      });
      throw failure;
    }

    const sse = new SseStream(reply);
    let settle!: () => void;
    inflight.track(
      controller,
      new Promise<void>((r) => {
        settle = r;
      }),
    );
    try {
      sse.open();
      sse.send('start', {
        user_message: publicMessage(userMessage),
        assistant_message_id: assistantId,
        model: modelName,
      });
      const result = await runExchange({
        model,
        first,
        messages: context.messages,
        tools,
        signal: controller.signal,
        modelName,
        maxToolRounds,
        sink: {
          delta: (text) => sse.delta(text),
          tool: ({ result, ...event }) => {
            // A proposal waiting for the user is shown, not stored: its decided call follows.
            if (event.status !== 'started' && event.status !== 'needs_confirmation') calls.push({ ...event, result });
            sse.send('tool', event);
          },
        },
      });
      await gate.enter('save');
      const saved = publicMessage(
        await core.db.tx(async (q) => {
          const row = await insertMessage(q, {
            ...base,
            content: result.content,
            status: result.status,
            usage: result.usage,
            usage_estimated: result.estimated,
            error: result.error?.message ?? null,
            created_at: now(),
            attachments: result.reports.map((r) => ({ type: 'report' as const, report_id: r.id, title: r.title })),
          });
          if (calls.length) {
            row.tools = JSON.stringify(calls);
            await q.run('UPDATE chat_messages SET tools = ? WHERE id = ?', [row.tools, row.id]);
          }
          await quotas.addTokens(user.id, day.day, result.usage.total_tokens, q);
          await quotas.addModelUsage(user.id, day.day, modelName, result.usage.total_tokens, q);
          return row;
        }),
      );
      if (result.status === 'complete' && bool((chat as ChatRow & { title_auto?: unknown }).title_auto)) {
        // The reply is complete for the client; the stream stays open for the generated title.
        sse.send('done', { message: saved });
        const titled = await generateTitle({
          core,
          model,
          quotas,
          user,
          chat,
          day: day.day,
          question: userMessage.content,
          answer: result.content,
          modelName,
        });
        if (titled) sse.send('title', { chat: titled });
      } else if (result.status === 'complete') sse.finish('done', { message: saved });
      else if (result.status === 'error')
        sse.finish('error', { detail: result.error!.message, code: result.error!.code, message: saved });
      else log.info({ chat_id: chat.id, message_id: assistantId }, 'client left; partial reply saved as interrupted');
    } catch (err) {
      log.error({ err }, 'message stream failed');
      sse.finish('error', { detail: 'Something went wrong on our side; the error was logged.', code: 'internal' });
    } finally {
      finished = true;
      reply.raw.off('close', onClose);
      sse.end();
      settle();
    }
  }
}
