import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from '../api/client';
import { useApp } from '../app-context';
import { nextPollDelay, DEFAULT_BACKOFF } from './backoff';
import { SseParser } from './sse-parser';

/** After an event, wait this long for more before reloading (a run start is several events). */
const SETTLE_MS = 250;
/** Reload this often anyway: heartbeat ages and next fires move without events. */
const REFRESH_MS = 30_000;

/**
 * Calls `onEvent` for every event of `GET /events` (filtered by `types`), reconnecting with
 * back-off when the stream ends or fails; `onOpen` runs on every (re)connection, so the caller
 * can reload what it may have missed. Reports whether the stream is open.
 */
const useEventStream = (
  types: string,
  onEvent: (type: string) => void,
  onOpen: () => void,
): boolean => {
  const { api } = useApp();
  const [open, setOpen] = useState(false);
  const handlers = useRef({ onEvent, onOpen });
  handlers.current = { onEvent, onOpen };
  useEffect(() => {
    const abort = new AbortController();
    let failures = 0;
    const connect = async (): Promise<void> => {
      while (!abort.signal.aborted) {
        try {
          const res = await api.openStream('/events', abort.signal, { type: types });
          const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader();
          if (!reader) throw new Error('no stream body');
          setOpen(true);
          failures = 0;
          handlers.current.onOpen();
          const parser = new SseParser();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            for (const e of parser.push(value)) handlers.current.onEvent(e.event);
          }
        } catch (e) {
          if (abort.signal.aborted) return;
          if (e instanceof ApiError && [401, 403].includes(e.status)) return setOpen(false);
          failures++;
        }
        setOpen(false);
        const wait = nextPollDelay(DEFAULT_BACKOFF, { active: true, failures });
        await new Promise((r) => window.setTimeout(r, wait));
      }
    };
    void connect();
    return () => abort.abort();
  }, [api, types]);
  return open;
};

interface LiveState<T> {
  readonly data: T | undefined;
  readonly error: ApiError | undefined;
  /** The event stream is open: the data follows changes as they happen. */
  readonly live: boolean;
  reload: () => void;
}

/**
 * `load()` once, then again whenever the event stream reports a change of `types` (after a short
 * settle), on every reconnection, and `refreshMs` after each load (30 s by default): one request
 * per change, never polling per item.
 */
export const useLive = <T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
  types = 'run,queue,worker',
  /** How long until the next reload without an event, given the data (default 30 s). */
  refreshMs: (data: T | undefined) => number = () => REFRESH_MS,
): LiveState<T> => {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<ApiError>();
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  /** A load is on its way: a stream opening now is covered by its answer. */
  const loading = useRef(false);
  /** The stream has opened before (a later opening is a reconnection: reload). */
  const opened = useRef(false);
  const timer = useRef<number | undefined>(undefined);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const soon = useCallback(() => {
    if (timer.current !== undefined) return;
    timer.current = window.setTimeout(() => {
      timer.current = undefined;
      reload();
    }, SETTLE_MS);
  }, [reload]);

  const refreshRef = useRef(refreshMs);
  refreshRef.current = refreshMs;
  useEffect(() => {
    let cancelled = false;
    let t: number | undefined;
    loading.current = true;
    loadRef.current().then(
      (d) => {
        loading.current = false;
        if (cancelled) return;
        setData(d);
        setError(undefined);
        t = window.setTimeout(reload, refreshRef.current(d));
      },
      (e: unknown) => {
        loading.current = false;
        if (cancelled) return;
        setError(e instanceof ApiError ? e : new ApiError(0, 'client', String(e)));
        t = window.setTimeout(reload, REFRESH_MS);
      },
    );
    return () => {
      cancelled = true;
      window.clearTimeout(t);
    };
  }, [...deps, tick]);
  useEffect(() => () => window.clearTimeout(timer.current), []);

  // The first opening while the first load is on its way needs no second load (one request per
  // page load, not two); a reconnection reloads what it may have missed.
  const onOpen = useCallback(() => {
    const first = !opened.current;
    opened.current = true;
    if (!(first && loading.current)) soon();
  }, [soon]);
  const live = useEventStream(types, soon, onOpen);
  return { data, error, live, reload };
};
