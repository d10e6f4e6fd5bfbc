/**
 * The provider side of the target e2e tests: an example-plugin webhook (`x-example-token`) →
 * tracker → the target under test. Events are sent with `fire()` and dispatched with `tick()`.
 */
import type { TestService } from '../helpers/service.ts';
import { chain, create, deliveries, event, relayOf } from './support.ts';

export const EXAMPLE_TOKEN = 'sharedtoken1';

export interface Pipeline {
  target: any;
  /** Sends one example event through the webhook; resolves with its event id. */
  fire(name: string, o?: { type?: string; note?: string }): Promise<string>;
  tick(): Promise<void>;
  /** The event as the API shows it, and its single delivery row. */
  outcome(eventId: string): Promise<{ event: any; delivery: any }>;
}

/** Creates the target through the API and wires an example provider to it. */
export async function pipeline(s: TestService, target: Record<string, unknown>): Promise<Pipeline> {
  const tg = await create(s, '/api/targets', { locale: 'en', ...target });
  const { hook } = await chain(s, {
    provider: { kind: 'example', name: 'Example', config: { shared_token: EXAMPLE_TOKEN } },
    target: tg,
  });
  const relay = relayOf(s);
  return {
    target: tg,
    async fire(name, o = {}) {
      const r = await s.request('POST', hook, {
        headers: { 'x-example-token': EXAMPLE_TOKEN },
        body: { type: o.type ?? 'thing_happened', payload: { name }, ...(o.note ? { note: o.note } : {}) },
      });
      if (r.status !== 202) throw new Error(`webhook: ${r.status} ${r.text}`);
      return r.body.event_ids[0];
    },
    tick: () => relay.tick(),
    async outcome(eventId) {
      const [delivery] = await deliveries(s, eventId);
      return { event: await event(s, eventId), delivery };
    },
  };
}

/** Milliseconds between two ISO timestamps. */
export const gap = (from: string, to: string): number => new Date(to).getTime() - new Date(from).getTime();
