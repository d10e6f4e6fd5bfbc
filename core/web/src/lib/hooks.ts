/** Small data hooks shared by the pages. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';

export interface Async<T> {
  data: T | undefined;
  error: ApiError | null;
  loading: boolean;
  reload: () => Promise<void>;
  set: (v: T) => void;
}

/** Runs `fn` on mount and whenever `deps` change; keeps the last data while reloading. */
export function useAsync<T>(fn: () => Promise<T>, deps: unknown[] = []): Async<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  const run = useCallback(async () => {
    const n = ++seq.current;
    setLoading(true);
    try {
      const v = await fn();
      if (n === seq.current) {
        setData(v);
        setError(null);
      }
    } catch (err) {
      if (n === seq.current)
        setError(err instanceof ApiError ? err : new ApiError(0, 'client', String((err as Error)?.message ?? err)));
    } finally {
      if (n === seq.current) setLoading(false);
    }
  }, deps);
  useEffect(() => {
    void run();
  }, [run]);
  return { data, error, loading, reload: run, set: setData };
}

/** Calls `fn` every `ms` while mounted (and the tab is visible). */
export function useInterval(fn: () => void, ms: number): void {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    const id = setInterval(() => {
      if (document.visibilityState !== 'hidden') saved.current();
    }, ms);
    return () => clearInterval(id);
  }, [ms]);
}
