/**
 * The hints of the live stream (`GET /api/live`): small notes that something of the user's changed, so that a client
 * refetches what it shows instead of polling. A hint never carries the changed record itself, only what tells a client
 * whether its view is concerned.
 */

/** The dispatch status of an event changed or an event was logged. */
export interface EventHint {
  kind: 'event';
  id: string;
  provider_id: string | null;
  dispatch_status: string;
}

/** A delivery was sent, failed for good, or was scheduled for another attempt at `next_attempt_at`. */
export interface DeliveryHint {
  kind: 'delivery';
  id: string;
  event_id: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
}

/** The user's deferred queue changed (a row added, released, sent now or dropped). */
export interface DeferredHint {
  kind: 'deferred';
}

/** A provider's (or a bot's) inbound webhook log got an entry. */
export interface WebhookLogHint {
  kind: 'webhook_log';
  provider_id: string | null;
  bot_id?: string;
}

export type LiveHint = EventHint | DeliveryHint | DeferredHint | WebhookLogHint;

/** Where hints are published: the bus of this process, or the forwarder of the dispatch thread. */
export interface LiveSink {
  /** Never throws and never waits: a publish must not slow or fail the work that raised it. */
  publish(userId: string, hint: LiveHint): void;
}

const NONE: LiveSink = { publish() {} };

/** The live sink the features registered (`live` service), or one that drops every hint. */
export const liveOf = (services: Map<string, unknown>): LiveSink => (services.get('live') as LiveSink) ?? NONE;
