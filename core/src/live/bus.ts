/**
 * The live bus of one process: hints go to the open streams of their user, and each user who has a stream (or had one
 * a short while ago) keeps the last hints in a bounded ring, so that a stream that reconnects with `Last-Event-ID`
 * gets what it missed, or a `reset` when that is no longer held. A hint for a user who has no stream here costs one
 * map lookup.
 *
 * Ids are `<epoch>-<seq>`: the epoch is this bus's, so an id from another replica or from before a restart is told
 * apart and answered with a reset.
 */
import crypto from 'node:crypto';
import type { LiveHint, LiveSink } from './hints.ts';

/** Hints held per user for a stream that reconnects. */
export const RING = 256;
/** How long a user's ring is kept after their last stream closed: long enough for a reconnect, or a reload. */
export const KEEP_MS = 5 * 60_000;

export interface Delivered {
  id: string;
  hint: LiveHint;
}

/** One open stream: gets its user's hints as they come. */
export interface Subscriber {
  userId: string;
  send(d: Delivered): void;
}

interface UserEntry {
  subscribers: Set<Subscriber>;
  ring: Delivered[];
  seqs: number[];
  /** The seq of the newest hint dropped from the ring (0: none). */
  evicted: number;
  /** When the last stream closed (null while one is open). */
  idleSince: number | null;
}

/** What a stream that opens gets first: the hints it missed, or a reset (refetch everything). */
export type Resume = { replay: Delivered[] } | { reset: true };

export class LiveBus implements LiveSink {
  readonly epoch = crypto.randomBytes(4).toString('hex');
  private seq = 0;
  private users = new Map<string, UserEntry>();
  /** Hints published here are also handed to this (the PostgreSQL relay to the other replicas). */
  outbound?: (userId: string, hint: LiveHint) => void;
  private now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** The id of the newest hint (what a stream that has seen everything so far would send back). */
  currentId(): string {
    return `${this.epoch}-${this.seq}`;
  }

  publish(userId: string, hint: LiveHint): void {
    this.outbound?.(userId, hint);
    this.deliver(userId, hint);
  }

  /** A hint from another replica (or this one): recorded and sent to the user's streams here. */
  deliver(userId: string, hint: LiveHint): void {
    const seq = ++this.seq;
    const u = this.users.get(userId);
    if (!u) return;
    const d = { id: `${this.epoch}-${seq}`, hint };
    u.ring.push(d);
    u.seqs.push(seq);
    if (u.ring.length > RING) {
      u.ring.shift();
      u.evicted = u.seqs.shift()!;
    }
    for (const s of u.subscribers) s.send(d);
  }

  /**
   * Opens a stream: from now on it gets its user's hints. With the id of the last hint it saw, the answer holds what
   * it missed since, or a reset when that cannot be known (another epoch, hints dropped from the ring, or no ring).
   */
  subscribe(s: Subscriber, lastId?: string): Resume {
    this.sweep();
    let u = this.users.get(s.userId);
    const known = u !== undefined;
    if (!u) {
      u = { subscribers: new Set(), ring: [], seqs: [], evicted: 0, idleSince: null };
      this.users.set(s.userId, u);
    }
    u.subscribers.add(s);
    u.idleSince = null;
    if (lastId === undefined) return { replay: [] };
    const m = /^([0-9a-f]+)-(\d+)$/.exec(lastId);
    if (!m || m[1] !== this.epoch) return { reset: true };
    const after = Number(m[2]);
    if (after > this.seq) return { reset: true };
    if (after === this.seq) return { replay: [] };
    // No ring for the user: whatever came since went unrecorded.
    if (!known || after < u.evicted) return { reset: true };
    const replay: Delivered[] = [];
    for (let i = 0; i < u.ring.length; i++) if (u.seqs[i]! > after) replay.push(u.ring[i]!);
    return { replay };
  }

  unsubscribe(s: Subscriber): void {
    const u = this.users.get(s.userId);
    if (!u?.subscribers.delete(s)) return;
    if (!u.subscribers.size) u.idleSince = this.now();
  }

  /** Open streams of a user (on this replica). */
  count(userId: string): number {
    return this.users.get(userId)?.subscribers.size ?? 0;
  }

  /** Every open stream, for the keep-alive and the re-check of their sessions. */
  *subscribers(): Iterable<Subscriber> {
    for (const u of this.users.values()) yield* u.subscribers;
  }

  /** Forgets the rings of users whose last stream closed more than KEEP_MS ago. */
  sweep(): void {
    const cutoff = this.now() - KEEP_MS;
    for (const [id, u] of this.users) if (u.idleSince !== null && u.idleSince < cutoff) this.users.delete(id);
  }
}
