/**
 * "Send a test event": `POST /api/providers/{id}/test-event` (to every tracker of the provider) and
 * `POST /api/trackers/{id}/test-event` (to that tracker only). The event is one of the provider's
 * declared types with a sample payload (the plugin's `example`, else one built from the schema),
 * ingested through the normal pipeline (tracker rules, quiet hours, queue, retries), recorded with
 * `test: true` and rendered with a test marker in the title.
 */

import Type from 'typebox';
import { Value } from 'typebox/value';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { Database as Db } from '../../db/database.ts';
import { HttpError, unprocessable } from '../../http/problem.ts';
import { errors, IdParams, ok } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import type { EventSpec } from '../../plugin-api/index.ts';
import { providerRowFrom } from '../../plugins/host.ts';
import type { ProviderDbRow } from '../definitions/provider.ts';
import type { TrackerDbRow } from '../definitions/tracker.ts';
import { EventTypeSchema } from '../vocabulary.ts';
import { owned, relay } from './common.ts';

const Body = Type.Union([
  Type.Object({ event_type: Type.Optional(EventTypeSchema) }, { additionalProperties: false }),
  Type.Null(),
]);
export const TestEventResult = Type.Object({
  event_id: Type.String(),
  event_type: Type.String(),
  test: Type.Literal(true),
  dispatch_status: Type.String(),
  deliveries: Type.Array(
    Type.Object({ target_id: Type.String(), status: Type.String(), reason: Type.Union([Type.String(), Type.Null()]) }),
  ),
});

/** At most this many test events per user in a minute: each one sends real messages. */
const LIMIT = 10;
const WINDOW_MS = 60_000;

/** The sample payload of an event type: the plugin's example, else the schema's defaults. */
function samplePayload(spec: EventSpec): Record<string, unknown> {
  if (spec.example) return structuredClone(spec.example);
  return Value.Create(spec.payload) as Record<string, unknown>;
}

/** The answers of both test-event routes. */
const TestEventAnswers = {
  ...ok('The test event and its deliveries.', TestEventResult),
  ...errors(
    [429, 'More than 10 test events this minute (`test_event_throttled`).'],
    [503, 'The relay pipeline is not running yet (`relay_unavailable`).'],
  ),
};

export async function testEventRoutes(app: App, core: Core): Promise<void> {
  const auth = requireUser(core);
  const recent = new Map<string, number[]>();

  /** Counts one test event of the user against the limit; 429 when the minute's budget is spent. */
  const throttle = (userId: string) => {
    const now = core.clock.now().getTime();
    const times = (recent.get(userId) ?? []).filter((at) => at > now - WINDOW_MS);
    if (times.length >= LIMIT) {
      const seconds = Math.max(1, Math.ceil((times[0]! + WINDOW_MS - now) / 1000));
      throw new HttpError(
        429,
        'test_event_throttled',
        `At most ${LIMIT} test events a minute; try again in ${seconds} seconds.`,
        { headers: { 'retry-after': String(seconds) }, params: { limit: LIMIT, seconds } },
      );
    }
    times.push(now);
    recent.set(userId, times);
  };

  /**
   * Picks the event type (the requested one, else the first declared type that `on` allows),
   * builds its sample, ingests it as a test and answers with the event and its deliveries.
   */
  const send = async (
    userId: string,
    provider: ProviderDbRow,
    requested: string | undefined,
    on: (type: string) => boolean,
    trackerIds?: string[],
  ) => {
    const plugin = core.plugins.provider(provider.kind);
    if (!plugin)
      throw unprocessable(
        `The plugin of this provider ("${provider.kind}") is not enabled, so it has no event types to test.`,
        undefined,
        'plugin_not_enabled',
        { kind: provider.kind },
      );
    const events = plugin.def.manifest.events ?? {};
    const declared = Object.keys(events);
    if (requested !== undefined && !declared.includes(requested)) {
      throw unprocessable(
        `"${requested}" is not an event type of ${provider.kind}; it declares: ${declared.join(', ') || 'none'}.`,
        [{ path: 'body/event_type', message: 'is not an event type of this provider' }],
        'unknown_event_type',
        { event_type: requested, kind: provider.kind },
      );
    }
    const type = requested ?? declared.find(on) ?? declared[0];
    if (!type)
      throw unprocessable(`The ${provider.kind} plugin declares no event types.`, undefined, 'no_event_types', {
        kind: provider.kind,
      });
    let payload: Record<string, unknown>;
    try {
      payload = samplePayload(events[type]!);
    } catch {
      payload = {};
    }
    const problem = core.plugins.validateEvent(provider.kind, { type, payload });
    if (problem)
      throw unprocessable(
        `The ${provider.kind} plugin has no valid sample payload for "${type}" (${problem}).`,
        undefined,
        'no_sample_payload',
        { event_type: type, kind: provider.kind },
      );
    throttle(userId);
    const [eventId] = await relay(core).ingestTest(providerRowFrom(provider), {
      type,
      payload,
      ...(trackerIds ? { trackerIds } : {}),
    });
    const ev = await core.db.get('SELECT dispatch_status FROM event_log WHERE id = ?', [eventId]);
    const deliveries = await core.db.all(
      'SELECT target_id, status, reason FROM deliveries WHERE event_id = ? ORDER BY id',
      [eventId],
    );
    return {
      event_id: eventId!,
      event_type: type,
      test: true as const,
      dispatch_status: String(ev?.dispatch_status ?? 'pending'),
      deliveries: deliveries.map((d) => ({
        target_id: d.target_id as string,
        status: d.status as string,
        reason: (d.reason ?? null) as string | null,
      })),
    };
  };

  const description =
    'Records a test event (marked `test: true` in the event log, its title starting with "[Test]" or ' +
    '"[Тест]") of `event_type` (default: the first declared type that is on) with the plugin\'s sample ' +
    'payload, and dispatches it through the normal pipeline: tracker rules and quiet hours apply, ' +
    'deliveries are queued and retried. Answers with the event and its deliveries. At most 10 test events ' +
    'a minute per user (429 `test_event_throttled`).';

  app.post(
    '/api/providers/:id/test-event',
    {
      schema: {
        tags: ['relay'],
        summary: 'Send a test event from a provider to the targets of all its trackers',
        description,
        params: IdParams,
        body: Type.Optional(Body),
        response: TestEventAnswers,
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const provider = await owned<ProviderDbRow>(core, 'providers', req.params.id, user.id, 'Provider');
      const trackers = await core.db.all('SELECT event_types FROM trackers WHERE provider_id = ? AND enabled = ?', [
        provider.id,
        true,
      ]);
      // The default type is one at least one enabled tracker passes on.
      const on = (type: string) =>
        trackers.some((t) => Db.json<Record<string, boolean>>(t.event_types, {})[type] !== false);
      return send(user.id, provider, req.body?.event_type, on);
    },
  );

  app.post(
    '/api/trackers/:id/test-event',
    {
      schema: {
        tags: ['relay'],
        summary: 'Send a test event to the targets linked to a tracker',
        description,
        params: IdParams,
        body: Type.Optional(Body),
        response: TestEventAnswers,
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const tracker = await owned<TrackerDbRow>(core, 'trackers', req.params.id, user.id, 'Tracker');
      const provider = await owned<ProviderDbRow>(core, 'providers', tracker.provider_id, user.id, 'Provider');
      const types = Db.json<Record<string, boolean>>(tracker.event_types, {});
      return send(user.id, provider, req.body?.event_type, (type) => types[type] !== false, [tracker.id]);
    },
  );
}
