/**
 * Live updates: one EventSource on `GET /api/live` per tab while signed in (the session cookie authenticates it). The
 * server sends small hints (`event`, `delivery`, `deferred`, `webhook_log`; `reset` when it cannot tell what was
 * missed) and pages refetch what they show when a hint concerns them, at most a few times a second (`useLive`).
 * The browser reconnects by itself after a network error and sends `Last-Event-ID`, so the server replays what was
 * missed; when the stream is refused (a restart, the per-user limit) it is opened again here after a back-off, with
 * the last id in the query.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'off';
export type HintKind = 'event' | 'delivery' | 'deferred' | 'webhook_log' | 'reset';
export interface Hint {
  kind: HintKind;
  id?: string;
  provider_id?: string | null;
  event_id?: string;
  dispatch_status?: string;
  status?: string;
  next_attempt_at?: string | null;
}

const KINDS: HintKind[] = ['event', 'delivery', 'deferred', 'webhook_log', 'reset'];
/** A page refetches at most this often however many hints come. */
const MIN_GAP_MS = 400;
const RETRY_MS = [2000, 5000, 15_000, 30_000];

let source: EventSource | null = null;
let state: LiveState = 'off';
let lastId = '';
let failures = 0;
let retryTimer: ReturnType<typeof setTimeout> | undefined;
const stateListeners = new Set<(s: LiveState) => void>();
const hintListeners = new Set<(h: Hint) => void>();

function setState(s: LiveState): void {
  if (s === state) return;
  state = s;
  for (const l of stateListeners) l(s);
}

function open(): void {
  const q = lastId ? `?last_event_id=${encodeURIComponent(lastId)}` : '';
  const es = new EventSource(`/api/live${q}`);
  source = es;
  setState(failures ? 'reconnecting' : 'connecting');
  const onHint = (kind: HintKind) => (e: MessageEvent) => {
    if (e.lastEventId) lastId = e.lastEventId;
    let data: Record<string, unknown> = {};
    try {
      data = JSON.parse(e.data);
    } catch {
      /* an empty hint */
    }
    const h = { ...data, kind } as Hint;
    for (const l of hintListeners) l(h);
  };
  for (const k of KINDS) es.addEventListener(k, onHint(k));
  es.addEventListener('ready', (e) => {
    if ((e as MessageEvent).lastEventId) lastId = (e as MessageEvent).lastEventId;
    failures = 0;
    setState('live');
  });
  es.onerror = () => {
    if (source !== es) return;
    // CONNECTING: the browser retries by itself. CLOSED: the answer was not a stream; open it again later.
    if (es.readyState === EventSource.CLOSED) {
      es.close();
      source = null;
      const delay = RETRY_MS[Math.min(failures, RETRY_MS.length - 1)]!;
      failures++;
      retryTimer = setTimeout(open, delay);
    }
    setState('reconnecting');
  };
}

/** Opens the stream (signed in); returns what closes it (signed out). */
export function connectLive(): () => void {
  if (typeof EventSource === 'undefined') return () => {};
  if (!source && !retryTimer) open();
  return () => {
    clearTimeout(retryTimer);
    retryTimer = undefined;
    source?.close();
    source = null;
    failures = 0;
    lastId = '';
    setState('off');
  };
}

/** The stream's state, for the indicator. */
export function useLiveState(): LiveState {
  const [s, set] = useState(state);
  useEffect(() => {
    set(state);
    stateListeners.add(set);
    return () => {
      stateListeners.delete(set);
    };
  }, []);
  return s;
}

/**
 * Calls `refetch` when a hint of one of `kinds` comes that `concerns` accepts (all by default), and after a `reset`;
 * several hints close together make one call, and calls are at least MIN_GAP_MS apart.
 */
export function useLive(kinds: HintKind[], refetch: () => void, concerns: (h: Hint) => boolean = () => true): void {
  const saved = useRef({ refetch, concerns, kinds });
  saved.current = { refetch, concerns, kinds };
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let last = 0;
    const listener = (h: Hint) => {
      const s = saved.current;
      if (h.kind !== 'reset' && (!s.kinds.includes(h.kind) || !s.concerns(h))) return;
      if (timer) return;
      timer = setTimeout(
        () => {
          timer = undefined;
          last = Date.now();
          saved.current.refetch();
        },
        Math.max(50, last + MIN_GAP_MS - Date.now()),
      );
    };
    hintListeners.add(listener);
    return () => {
      clearTimeout(timer);
      hintListeners.delete(listener);
    };
  }, []);
}
