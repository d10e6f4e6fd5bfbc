import Type from 'typebox';
import type { App } from '../http/server.ts';
import type { Core } from '../core.ts';
import { newId } from '../http/ids.ts';
import { unavailable, unprocessable } from '../http/problem.ts';
import { requireUser, caller } from '../auth/guard.ts';
import { ChatParams, ownChat } from './chats.ts';
import { insertMessage, publicMessage, type NewMessage } from './messages.ts';
import { assembleContext, messageTokens } from './assemble.ts';
import { ModelClient } from './model.ts';
import { runExchange } from './exchange.ts';
import type { ModelStream } from './model-stream.ts';
import { SseStream } from './sse.ts';
import { turn } from './turns.ts';
import { assistantTools } from './tools.ts';
import type { Quotas } from './quotas.ts';
import type { Reports } from './reports.ts';

export const MAX_CONTENT = 32_000;
const Body = Type.Object({ content: Type.String({ minLength: 1, maxLength: MAX_CONTENT }) }, { additionalProperties: false });

/**
 * `POST /api/v1/chats/{chat_id}/messages`. Before streaming: 404 for a chat that is not the
 * caller's, 422 for empty or over-long content, 503 without AI_API_KEY, 429 over a quota (the
 * message counted atomically), 502/503 when the model endpoint fails (the user message kept,
 * an assistant message with status `error` recorded, the message count given back). Then an
 * SSE stream: start, delta…, tool…, done | error. A client that leaves aborts the model call and
 * the partial reply is saved as `interrupted` with the tokens spent.
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
    await Promise.race([Promise.allSettled([...this.running.values()]), new Promise((r) => { timer = setTimeout(r, ms); })]);
    clearTimeout(timer);
  }
}

export async function sendRoutes(app: App, core: Core, deps: { quotas: Quotas; model: ModelClient; reports: Reports; inflight: InFlight }): Promise<void> {
  const { quotas, model, reports, inflight } = deps;
  const log = core.logs.get('assistant');

  app.post('/api/v1/chats/:chat_id/messages', {
    schema: { tags: ['assistant'], params: ChatParams, body: Body, produces: ['text/event-stream', 'application/problem+json'] },
    preHandler: requireUser(core),
  }, async (req, reply) => {
    // Setting a reply up and saving it wait their turn, so a burst of messages cannot stall the streams already running.
    await turn();
    const user = caller(req);
    const chat = await ownChat(core.db, user.id, (req.params as { chat_id: string }).chat_id);
    const { content } = req.body as { content: string };
    if (!content.trim()) throw unprocessable('The message is empty; write something to send.', [{ path: 'body/content', message: 'must not be blank' }]);
    if (!model.configured) throw unavailable('The assistant is not configured: the server has no AI_API_KEY. Ask the administrator to set it.', 'assistant_not_configured');

    const day = await quotas.reserve(user);
    const now = () => core.clock.now().toISOString();
    const userMessage = await insertMessage(core.db, { chat_id: chat.id, user_id: user.id, role: 'user', content, created_at: now() });
    await core.db.run('UPDATE chats SET updated_at = ? WHERE id = ?', [userMessage.created_at, chat.id]);
    const context = await assembleContext(core, user.id, chat, userMessage);
    const assistantId = newId();
    const base = { id: assistantId, chat_id: chat.id, user_id: user.id, role: 'assistant', context_version: context.contextVersion } satisfies Partial<NewMessage>;

    const controller = new AbortController();
    let finished = false;
    const onClose = () => { if (!finished) controller.abort(); };
    reply.raw.on('close', onClose);
    const tools = assistantTools(reports, user, log);

    let first: ModelStream;
    try {
      first = await model.open(context.messages, tools.definitions, controller.signal);
    } catch (err) {
      finished = true;
      reply.raw.off('close', onClose);
      if (ModelClient.isAbort(err, controller.signal)) {
        // The client left before the model answered; the prompt may already have been processed.
        const prompt = context.messages.reduce((n, m) => n + messageTokens(m), 0);
        // The reply and the tokens it cost are recorded together, so usage and history always agree.
        await core.db.tx(async (q) => {
          await insertMessage(q, { ...base, content: '', status: 'interrupted', usage: { prompt_tokens: prompt, completion_tokens: 0, total_tokens: prompt }, usage_estimated: true, created_at: now() });
          await quotas.addTokens(user.id, day.day, prompt, q);
        });
        reply.hijack();
        reply.raw.destroy();
        return;
      }
      const failure = model.failure(err);
      log.warn({ code: failure.code, status: failure.status }, 'model call failed before streaming');
      await insertMessage(core.db, { ...base, content: '', status: 'error', error: failure.message, created_at: now() });
      // Nothing was produced, so the message does not count against the day.
      await quotas.release(user.id, day.day);
      throw failure;
    }

    const sse = new SseStream(reply);
    let settle!: () => void;
    inflight.track(controller, new Promise<void>((r) => { settle = r; }));
    try {
      sse.open();
      sse.send('start', { user_message: publicMessage(userMessage), assistant_message_id: assistantId });
      const result = await runExchange({
        model, first, messages: context.messages, tools, signal: controller.signal,
        sink: { delta: (text) => sse.delta(text), tool: (event) => sse.send('tool', event) },
      });
      await turn();
      const saved = publicMessage(await core.db.tx(async (q) => {
        const row = await insertMessage(q, {
          ...base, content: result.content, status: result.status, usage: result.usage, usage_estimated: result.estimated,
          error: result.error?.message ?? null, created_at: now(),
        });
        await quotas.addTokens(user.id, day.day, result.usage.total_tokens, q);
        return row;
      }));
      if (result.status === 'complete') sse.finish('done', { message: saved });
      else if (result.status === 'error') sse.finish('error', { detail: result.error!.message, code: result.error!.code, message: saved });
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
  });
}
