/** Today's AI usage against the limits: fetched on mount, every 30 seconds, and on demand. */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { get } from './api.ts';
import { useInterval } from './hooks.ts';
import type { Quota } from './types.ts';

export const QUOTA_REFRESH_MS = 30_000;

export function useQuota(): { quota: Quota | null; refresh: () => Promise<void> } {
  const [quota, setQuota] = useState<Quota | null>(null);
  const refresh = useCallback(async () => {
    try {
      setQuota(await get<Quota>('/api/v1/chats/quota'));
    } catch {
      /* keep the last known value */
    }
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  useInterval(() => void refresh(), QUOTA_REFRESH_MS);
  return { quota, refresh };
}

/** Why sending is blocked right now, as a locale key, or null. The message limit is checked first. */
export const blockedBy = (q: Quota | null): 'messages' | 'tokens' | null =>
  !q ? null : q.messages_exceeded ? 'messages' : q.tokens_exceeded ? 'tokens' : null;
