/**
 * `GET /api/live`: a server-sent event stream of hints about the caller's own resources (hints.ts), sent with
 * fastify-sse-v2. Each message has an id; a client that reconnects with `Last-Event-ID` (a browser's EventSource does
 * it by itself) gets the hints it missed, or `reset` when they are no longer held. The first message is `ready`, so
 * that even a quiet stream leaves the client an id to resume from. A comment every 15 s keeps proxies from closing an
 * idle stream, and at each one the stream's session is checked again: a signed-out or revoked session, or a
 * deactivated user, ends it.
 */
import type { FastifyRequest } from 'fastify';
import { FastifySSEPlugin } from 'fastify-sse-v2';
import Type from 'typebox';
import { authenticate, caller, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import { tooMany } from '../http/problem.ts';
import { errors, file } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import type { Delivered, LiveBus, Subscriber } from './bus.ts';

/** Open streams per user on one replica; a user has one per open tab of the web client. */
export const MAX_PER_USER = 8;
/** Comment interval (15 s), shortened in tests with HERALD_SSE_KEEPALIVE_MS as for the chat stream. */
const keepAliveMs = (): number => Number(process.env.HERALD_SSE_KEEPALIVE_MS ?? 15_000);
/** How long a client waits before it reconnects. */
const RETRY_MS = 2000;

const LiveQuery = Type.Object({
  last_event_id: Type.Optional(
    Type.String({
      maxLength: 64,
      description: 'The id of the last message seen, for clients that cannot send the `Last-Event-ID` header.',
    }),
  ),
});

interface Stream extends Subscriber {
  req: FastifyRequest;
  comment(): void;
  end(): void;
}

/** Open streams and the one timer that keeps them alive and checks their sessions. */
export class LiveStreams {
  private open = new Set<Stream>();
  private timer?: NodeJS.Timeout;
  private core: Core;
  private bus: LiveBus;

  constructor(core: Core, bus: LiveBus) {
    this.core = core;
    this.bus = bus;
  }

  add(s: Stream): void {
    this.open.add(s);
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), keepAliveMs());
    this.timer.unref();
  }

  remove(s: Stream): void {
    this.bus.unsubscribe(s);
    if (!this.open.delete(s) || this.open.size || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async tick(): Promise<void> {
    this.bus.sweep();
    for (const s of [...this.open]) {
      try {
        await authenticate(this.core, s.req);
        s.comment();
      } catch {
        s.end();
      }
    }
  }

  /** Ends every stream (shutdown): the clients reconnect to another replica, or to this one once it is back. */
  closeAll(): void {
    for (const s of [...this.open]) s.end();
  }
}

export async function liveRoutes(app: App, core: Core, bus: LiveBus, streams: LiveStreams): Promise<void> {
  await app.register(FastifySSEPlugin, { retryDelay: RETRY_MS });
  app.get(
    '/api/live',
    {
      schema: {
        tags: ['live'],
        summary: 'Live hints about your events, deliveries, deferred queue and webhook logs',
        description:
          'A `text/event-stream`. Messages: `ready` (first), `event` `{ id, provider_id, dispatch_status }`, ' +
          '`delivery` `{ id, event_id, status, attempts, next_attempt_at }`, `deferred` `{}`, `webhook_log` ' +
          '`{ provider_id }`, and `reset` `{}` when hints since `Last-Event-ID` are no longer held (refetch). ' +
          `At most ${MAX_PER_USER} streams per user.`,
        querystring: LiveQuery,
        response: {
          ...file('The stream of hints.', 'text/event-stream'),
          ...errors([429, `You have ${MAX_PER_USER} live streams open already (\`live_streams_exceeded\`).`]),
        },
      },
      preHandler: requireUser(core),
    },
    async (req, reply) => {
      const user = caller(req);
      if (bus.count(user.id) >= MAX_PER_USER)
        throw tooMany(
          `You have ${MAX_PER_USER} live streams open already; close a tab of the web client first.`,
          RETRY_MS / 1000,
          'live_streams_exceeded',
          { limit: MAX_PER_USER },
        );
      const header = req.headers['last-event-id'];
      const lastId = (typeof header === 'string' && header ? header : undefined) ?? req.query.last_event_id;
      let ended = false;
      const stream: Stream = {
        userId: user.id,
        req,
        send: (d) => {
          if (!ended) reply.sse({ id: d.id, event: d.hint.kind, data: JSON.stringify(withoutKind(d)) });
        },
        comment: () => {
          if (!ended) reply.sse({ comment: ' keep-alive' });
        },
        end: () => {
          if (ended) return;
          ended = true;
          streams.remove(stream);
          reply.sseContext?.source.end();
        },
      };
      // Carried onto the stream's headers by fastify-sse-v2: nginx would otherwise hold the hints back in its buffer.
      reply.header('x-accel-buffering', 'no');
      const resume = bus.subscribe(stream, lastId);
      streams.add(stream);
      reply.raw.on('close', stream.end);
      if ('reset' in resume) reply.sse({ id: bus.currentId(), event: 'reset', data: '{}' });
      else {
        for (const d of resume.replay) stream.send(d);
        reply.sse({ id: bus.currentId(), event: 'ready', data: JSON.stringify({ replayed: resume.replay.length }) });
      }
    },
  );
}

function withoutKind(d: Delivered): Record<string, unknown> {
  const { kind: _, ...rest } = d.hint;
  return rest;
}
