/**
 * A client of `GET /api/live` for tests: opens the stream with fetch, parses its messages with the web client's own
 * parser, and lets a test wait for a message that matches.
 */
import { type SseEvent, SseParser } from '../../core/web/src/lib/sse.ts';

export interface LiveMessage {
  event: string;
  id?: string;
  data: any;
}

export interface LiveClient {
  status: number;
  /** The problem details when the stream was refused. */
  problem?: any;
  messages: LiveMessage[];
  /** Resolves with the first message (seen already or to come) that matches; rejects after `ms`. */
  next(match: (m: LiveMessage) => boolean, ms?: number): Promise<LiveMessage>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function openLive(
  baseUrl: string,
  token: string,
  o: { lastEventId?: string; headers?: Record<string, string> } = {},
): Promise<LiveClient> {
  const ac = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(o.headers ?? {}) };
  if (o.lastEventId) headers['last-event-id'] = o.lastEventId;
  const res = await fetch(`${baseUrl}/api/live`, { headers, signal: ac.signal });
  const messages: LiveMessage[] = [];
  const waiters = new Set<() => void>();
  if (res.status !== 200) {
    const problem = await res.json().catch(() => undefined);
    return {
      status: res.status,
      problem,
      messages,
      next: () => Promise.reject(new Error(`the stream was refused with ${res.status}`)),
      ended: Promise.resolve(),
      close() {},
    };
  }
  const parser = new SseParser((e: SseEvent) => {
    let data: unknown = e.data;
    try {
      data = JSON.parse(e.data);
    } catch {
      /* not JSON */
    }
    messages.push({ event: e.event, id: e.id, data });
    for (const w of [...waiters]) w();
  });
  const ended = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>)
        parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      /* aborted */
    }
  })();
  return {
    status: res.status,
    messages,
    ended,
    next(match, ms = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = messages.find(match);
          if (!m) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(m);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no live message matched within ${ms} ms; got ${JSON.stringify(messages)}`));
        }, ms);
        if (!check()) waiters.add(check);
      });
    },
    close: () => ac.abort(),
  };
}
