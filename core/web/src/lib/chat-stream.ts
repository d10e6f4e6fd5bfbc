/**
 * Sends a chat message and reads the streamed reply (`text/event-stream`) with fetch and a
 * ReadableStream reader. Aborting the signal stops reading and closes the connection, which
 * makes the service save the partial reply as interrupted.
 */
import { headers, toError } from './api.ts';
import { SseParser } from './sse.ts';
import type { Chat, ChatToolCall, Message } from './types.ts';

export interface StreamHandlers {
  start?(d: { user_message: Message; assistant_message_id: string; model?: string }): void;
  delta?(d: { content: string }): void;
  /**
   * A tool call: started, waiting for the user's consent (`needs_confirmation`, with its id and proposal), done or
   * failed; the same shape as a stored message's `tools` entry.
   */
  tool?(d: ChatToolCall): void;
  /** After `done`, when the service generated the chat's title. */
  title?(d: { chat: Chat }): void;
  done?(d: { message: Message }): void;
  error?(d: { detail: string; code: string; message?: Message }): void;
}

/** Resolves when the stream ends (or the signal aborts: then it rejects with an AbortError). */
export function sendMessage(
  chatId: string,
  content: string,
  signal: AbortSignal,
  on: StreamHandlers,
  documents: string[] = [],
): Promise<void> {
  return streamReply(
    `/api/v1/chats/${chatId}/messages`,
    documents.length ? { content, documents } : { content },
    signal,
    on,
  );
}

/** Another reply to the question `messageId` answered (regenerate, or retry after a failure). */
export function regenerateMessage(
  chatId: string,
  messageId: string,
  signal: AbortSignal,
  on: StreamHandlers,
): Promise<void> {
  return streamReply(`/api/v1/chats/${chatId}/messages/${messageId}/regenerate`, undefined, signal, on);
}

/** The question `messageId` asked again as `content`, from the same point of the conversation. */
export function editMessage(
  chatId: string,
  messageId: string,
  content: string,
  signal: AbortSignal,
  on: StreamHandlers,
): Promise<void> {
  return streamReply(`/api/v1/chats/${chatId}/messages/${messageId}/edit`, { content }, signal, on);
}

async function streamReply(path: string, body: unknown, signal: AbortSignal, on: StreamHandlers): Promise<void> {
  const res = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    signal,
    headers: headers({
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      accept: 'text/event-stream',
    }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok || !res.headers.get('content-type')?.startsWith('text/event-stream') || !res.body)
    throw await toError(res, path);
  const parser = new SseParser((e) => {
    let data: any;
    try {
      data = JSON.parse(e.data);
    } catch {
      return;
    }
    const fn = (on as Record<string, ((d: unknown) => void) | undefined>)[e.event];
    fn?.(data);
  });
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const stop = () => {
    void reader.cancel().catch(() => {});
  };
  signal.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
    parser.feed(decoder.decode());
  } finally {
    signal.removeEventListener('abort', stop);
  }
  if (signal.aborted) throw new DOMException('The reply was stopped.', 'AbortError');
}
