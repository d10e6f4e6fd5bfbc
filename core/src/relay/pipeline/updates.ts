/**
 * Messages that follow the state. An event type may declare a correlation (`EventSpec.correlation`):
 * a key computed from the payload, shared by the event types of one thread (a UPS on battery, then
 * on line). Per target and key, `message_threads` remembers the latest event and where its message
 * lives (`message_ref`, the target's own JSON). A later event with the same key edits that message
 * when the target can (`update`), else replies to it (`reply`), else goes out as a new message,
 * which then becomes the one later events follow. The index is durable: retries and restarts keep
 * editing the same message.
 */
import { createHash } from 'node:crypto';
import type { Core } from '../../core.ts';
import { Database, type Queryable } from '../../db/database.ts';
import type {
  FollowUpRequest,
  MessageRef,
  OutboundMessage,
  SendOptions,
  SendResult,
  TargetInstance,
} from '../../plugin-api/index.ts';
import { errorCode, NOT_SUPPORTED } from '../../plugin-api/index.ts';
import type { EventDbRow } from '../definitions/event.ts';
import type { TargetDbRow } from '../definitions/target.ts';

/** How a delivery went out: a new message, an edit of the earlier one, or a reply threaded to it. */
export type SendMode = 'send' | 'edit' | 'reply';

/** Largest stored `message_ref`, as JSON. A larger one is not kept (the message cannot be followed). */
export const MAX_REF_BYTES = 4096;
/** Keys longer than this are stored as their SHA-256. */
const MAX_KEY_LENGTH = 200;

export interface Thread {
  event_id: string;
  event_type: string;
  delivery_id: string;
  message_ref: MessageRef;
}

/** A `message_threads` row's columns a follow-up reads. */
type ThreadRow = Omit<Thread, 'message_ref'> & { message_ref: unknown };

function at(payload: unknown, path: string): unknown {
  let v: unknown = payload;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

const scalar = (v: unknown): string | undefined =>
  (typeof v === 'string' && v !== '') || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean'
    ? String(v)
    : undefined;

/**
 * The correlation key of an event for the target row, or undefined when the event is not followed:
 * its type declares no correlation, the payload lacks the key, it is a test event, it has no
 * provider instance any more, or the target's `update_messages` is off.
 */
export function correlationKey(
  core: Core,
  ev: Partial<Pick<EventDbRow, 'provider_id' | 'provider_kind' | 'event_type' | 'payload' | 'test'>>,
  target: Partial<Pick<TargetDbRow, 'update_messages'>>,
): string | undefined {
  if (target.update_messages !== undefined && target.update_messages !== null && !Database.bool(target.update_messages))
    return undefined;
  if (Database.bool(ev.test) || !ev.provider_id) return undefined;
  const spec = core.plugins.provider(String(ev.provider_kind))?.def.manifest.events?.[String(ev.event_type)]
    ?.correlation;
  if (!spec) return undefined;
  const payload = Database.json<Record<string, unknown>>(ev.payload, {});
  let value: string | undefined;
  try {
    if (typeof spec.key === 'function') value = scalar(spec.key(payload));
    else if (Array.isArray(spec.key) && spec.key.length) {
      const parts = spec.key.map((p) => scalar(at(payload, p)));
      value = parts.every((p) => p !== undefined) ? JSON.stringify(parts) : undefined;
    }
  } catch (err) {
    core.logs
      .get('relay')
      .warn(
        { err, event_type: ev.event_type },
        'computing a correlation key failed; the event is sent as a new message',
      );
    return undefined;
  }
  if (value === undefined) return undefined;
  const key = `${ev.provider_id}|${spec.thread ?? ev.event_type}|${value}`;
  return key.length > MAX_KEY_LENGTH ? `sha256:${createHash('sha256').update(key).digest('hex')}` : key;
}

/** The message the key's latest event went out as on this target, if any. */
export async function findThread(db: Queryable, targetId: string, key: string): Promise<Thread | undefined> {
  const row = await db.get<ThreadRow>(
    'SELECT event_id, event_type, delivery_id, message_ref FROM message_threads WHERE target_id = ? AND ' +
      'correlation_key = ?',
    [targetId, key],
  );
  if (!row) return undefined;
  const ref = Database.json<MessageRef | null>(row.message_ref, null);
  return ref
    ? { event_id: row.event_id, event_type: row.event_type, delivery_id: row.delivery_id, message_ref: ref }
    : undefined;
}

/** A ref fit to store: a JSON object within MAX_REF_BYTES, else undefined. */
export function storableRef(ref: unknown): MessageRef | undefined {
  if (!ref || typeof ref !== 'object' || Array.isArray(ref)) return undefined;
  try {
    return Buffer.byteLength(JSON.stringify(ref)) <= MAX_REF_BYTES ? (ref as MessageRef) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes `ref` the message later events of `key` follow on this target. An older event never
 * displaces a newer one (event ids are time-ordered), so a late retry cannot take the thread back.
 */
export async function recordThread(
  db: Queryable,
  t: {
    targetId: string;
    userId: string;
    key: string;
    eventId: string;
    eventType: string;
    deliveryId: string;
    ref: MessageRef;
    now: string;
  },
): Promise<void> {
  await db.run(
    `INSERT INTO message_threads (target_id, correlation_key, user_id, event_id, event_type, delivery_id, message_ref,
      created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (target_id, correlation_key) DO UPDATE SET event_id = excluded.event_id, event_type =
    excluded.event_type, delivery_id = excluded.delivery_id,
      message_ref = excluded.message_ref, updated_at = excluded.updated_at
    WHERE message_threads.event_id <= excluded.event_id`,
    [t.targetId, t.key, t.userId, t.eventId, t.eventType, t.deliveryId, JSON.stringify(t.ref), t.now, t.now],
  );
}

export interface FollowOutcome {
  mode: SendMode;
  result?: SendResult | void;
  /** The ref later events of the thread follow: the edited message, or the reply when editing failed. */
  head?: MessageRef;
  /** Why an edit or reply was given up for the next way, for the log. */
  fallback?: string;
}

/**
 * Follows `thread` with `message`: `update`, then `reply`, each skipped when the target lacks it,
 * answers NOT_SUPPORTED or throws PermanentSendError. Resolves undefined when neither worked: the
 * caller sends a new message. Any other error is the send's failure (retried as usual; the retry
 * tries the edit again).
 */
export async function followUp(
  instance: TargetInstance,
  thread: Thread,
  message: OutboundMessage,
  options: SendOptions,
): Promise<FollowOutcome | undefined> {
  const request: FollowUpRequest = {
    previous: { messageRef: thread.message_ref, deliveryId: thread.delivery_id, eventType: thread.event_type },
    message,
  };
  let editFailed: string | undefined;
  if (instance.update) {
    try {
      const r = await instance.update(request, options);
      if (r !== NOT_SUPPORTED)
        return { mode: 'edit', result: r, head: storableRef(r?.messageRef) ?? thread.message_ref };
    } catch (err) {
      if (errorCode(err) !== 'PERMANENT_SEND') throw err;
      editFailed = (err as Error).message;
    }
  }
  if (instance.reply) {
    try {
      const r = await instance.reply(request, options);
      // After a failed edit (the message is gone, too old…) later events follow the reply; a channel
      // that never edits keeps threading under the first message.
      if (r !== NOT_SUPPORTED)
        return {
          mode: 'reply',
          result: r,
          head: editFailed ? (storableRef(r?.messageRef) ?? thread.message_ref) : thread.message_ref,
          fallback: editFailed,
        };
    } catch (err) {
      if (errorCode(err) !== 'PERMANENT_SEND') throw err;
      return { mode: 'send', fallback: (err as Error).message };
    }
  }
  return editFailed ? { mode: 'send', fallback: editFailed } : undefined;
}
