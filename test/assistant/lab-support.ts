/**
 * Shared set-up for the tests of the assistant's tools over the relay: a user's provider of the
 * example kind with a tracker and recorder targets (each posting to its own loopback sink), events
 * raised through the relay, and a chat stream read while the test acts on what it shows (the
 * consent cards).
 */
import { createParser } from 'eventsource-parser';
import { providerRowFrom } from '../../core/src/plugins/host.ts';
import type { ProviderDbRow } from '../../core/src/relay/definitions/provider.ts';
import { startSink, type TestService } from '../helpers/service.ts';
import type { StreamEvent, StreamResult } from './support.ts';

export type Sink = Awaited<ReturnType<typeof startSink>>;

type Tap = { teardown(fn: () => unknown): void };

/**
 * A provider named `name` for the user, a tracker on it, and one recorder target per entry of `targets` (name →
 * locale), each with its own sink.
 */
export async function lab(
  t: Tap,
  svc: TestService,
  token: string,
  o: { provider?: string; targets?: Record<string, 'en' | 'ru'> } = {},
) {
  const p = (
    await svc.request('POST', '/api/providers', {
      token,
      body: { kind: 'example', name: o.provider ?? 'NAS', config: { shared_token: 'sharedtoken1' } },
    })
  ).body;
  if (!p?.id) throw new Error(`provider creation failed: ${JSON.stringify(p)}`);
  const tr = (await svc.request('POST', '/api/trackers', { token, body: { provider_id: p.id, name: 'All' } })).body;
  const targets: Record<string, { id: string; sink: Sink }> = {};
  for (const [name, locale] of Object.entries(o.targets ?? { Sink: 'en' })) {
    const sink = await startSink();
    t.teardown(() => sink.close());
    const tg = (
      await svc.request('POST', '/api/targets', {
        token,
        body: { kind: 'recorder', name, config: { url: sink.url }, locale },
      })
    ).body;
    if (!tg?.id) throw new Error(`target creation failed: ${JSON.stringify(tg)}`);
    targets[name] = { id: tg.id, sink };
  }
  const first = Object.values(targets)[0];
  if (first) await svc.request('PUT', `/api/trackers/${tr.id}/targets/${first.id}`, { token });
  const row = await svc.service.core.db.get<ProviderDbRow>('SELECT * FROM providers WHERE id = ?', [p.id]);
  const relay = svc.service.core.services.get('relay') as {
    ingest(p: unknown, e: unknown): Promise<string[]>;
    tick(): Promise<void>;
  };
  /** Raises one event of the provider through the relay; resolves with its id. */
  const emit = async (type: 'thing_happened' | 'alarm' | 'stale_thing', name: string) =>
    (await relay.ingest(providerRowFrom(row!), { type, payload: { name } }))[0]!;
  return { provider: p, tracker: tr, targets, emit, relay };
}

/** A model reply that calls `name` with `args`. */
export const call = (name: string, args: Record<string, unknown>) => ({
  toolCall: { name, arguments: JSON.stringify(args), pieces: 2 },
});

/** The tool results (parsed) in a request to the model. */
export const toolResults = (body: any): any[] =>
  (body.messages as any[]).filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content));

/** The names of the tools offered in a request to the model. */
export const offered = (body: any): string[] => (body.tools ?? []).map((x: any) => x.function.name).sort();

/**
 * Posts a message and reads the stream to its end; `on` is called (and awaited) for each event as
 * it arrives, while the stream stays open, so a test can answer a consent card mid-reply.
 */
export async function converse(
  svc: TestService,
  token: string,
  chatId: string,
  content: string,
  on: (e: StreamEvent) => Promise<void> | void = () => {},
  signal?: AbortSignal,
): Promise<StreamResult> {
  const res = await fetch(`${svc.url}/api/v1/chats/${chatId}/messages`, {
    method: 'POST',
    signal,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ content }),
  });
  const out: StreamResult = { status: res.status, headers: res.headers, events: [], comments: [] };
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
    out.problem = await res.json().catch(() => null);
    return out;
  }
  const arrived: StreamEvent[] = [];
  const parser = createParser({
    onEvent: (e) => {
      arrived.push({ event: e.event ?? 'message', data: JSON.parse(e.data) });
    },
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      while (arrived.length) {
        const e = arrived.shift()!;
        out.events.push(e);
        await on(e);
      }
    }
  } catch (err) {
    // The test stopping the reply (`signal`) is an outcome it looks for.
    if (!signal?.aborted) throw err;
  }
  return out;
}

/** The `tool` events of a stream with this status. */
export const tools = (r: StreamResult, status: string) =>
  r.events.filter((e) => e.event === 'tool' && e.data.status === status).map((e) => e.data);
