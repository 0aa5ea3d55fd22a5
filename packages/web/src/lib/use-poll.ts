import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from '../api/client';
import { DEFAULT_BACKOFF, nextPollDelay } from './backoff';

export interface PollState<T> {
  readonly data: T | undefined;
  readonly error: ApiError | undefined;
  readonly loading: boolean;
  /** Fetch again now (after an action). */
  reload: () => void;
}

/**
 * Loads `load()` and reloads it on a timer while the page is open: every second while `active`
 * says something is running, every five otherwise, doubling after errors (issue #8: live updates
 * by polling with back-off). Hidden tabs wait until they are visible again.
 */
export const usePoll = <T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
  active: (data: T) => boolean = () => false,
): PollState<T> => {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<ApiError>();
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const failures = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const activeRef = useRef(active);
  activeRef.current = active;

  useEffect(() => {
    setData(undefined);
    setError(undefined);
    setLoading(true);
    failures.current = 0;
  }, deps);

  useEffect(() => {
    let cancelled = false;
    let timer: number | undefined;
    const run = async () => {
      let isActive = false;
      try {
        const d = await loadRef.current();
        if (cancelled) return;
        setData(d);
        setError(undefined);
        failures.current = 0;
        isActive = activeRef.current(d);
      } catch (e) {
        if (cancelled) return;
        failures.current++;
        setError(e instanceof ApiError ? e : new ApiError(0, 'client_error', String(e)));
        // 401/403/404 will not mend by themselves: stop polling.
        if (e instanceof ApiError && [401, 403, 404].includes(e.status)) {
          setLoading(false);
          return;
        }
      }
      setLoading(false);
      const delay = nextPollDelay(DEFAULT_BACKOFF, {
        active: isActive,
        failures: failures.current,
      });
      timer = window.setTimeout(() => {
        if (document.hidden) {
          const onVisible = () => {
            document.removeEventListener('visibilitychange', onVisible);
            if (!cancelled) void run();
          };
          document.addEventListener('visibilitychange', onVisible);
        } else void run();
      }, delay);
    };
    void run();
    return () => {
      cancelled = true;
      if (timer !== undefined) window.clearTimeout(timer);
    };
  }, [...deps, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
};

/** A clock that re-renders every `ms` (elapsed times, heartbeat ages). */
export const useNow = (ms = 1000): number => {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = window.setInterval(() => setNow(Date.now()), ms);
    return () => window.clearInterval(t);
  }, [ms]);
  return now;
};
