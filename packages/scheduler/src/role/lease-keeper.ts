import type { Clock } from '@trellis/core';

/** The scheduler lease of a store (`LeaseLock` in @trellis/store): one scheduler at a time. */
export interface SchedulerLease {
  tryAcquire(): Promise<boolean>;
  renew(): Promise<boolean>;
  release(): Promise<void>;
  holder(): Promise<
    { readonly owner: { readonly pid: number; readonly host: string } } | undefined
  >;
}

/** How often a leader renews, and how long its lease lasts (absent: the lease has no expiry known here). */
export interface LeaseTiming {
  readonly everyMs: number;
  /**
   * The lease's time to live (the PostgreSQL lease). With it, the holder steps down on its own
   * clock before the lease can expire: when no renewal succeeded within {@link safeHoldMs} of
   * the start of the last one that did, whether the database answered with errors or not at all
   * (a leader cut off from it by a network partition, or paused).
   */
  readonly ttlMs?: number;
}

/** A failed renewal is tried again this soon, while the lease is still safely held. */
const RETRY_MS = 100;

/**
 * How long after a renewal's start the holder may still act on it: three quarters of the TTL.
 * The database dates the lease from when it ran the renewal, never before the request left, so
 * the quarter left is the margin for the two clocks' rates and a late timer.
 */
export const safeHoldMs = (ttlMs: number): number => Math.floor((ttlMs * 3) / 4);

type Attempt = 'renewed' | 'lost' | 'late' | 'stopped' | Error;

/** One renewal, or 'late' when `ms` pass first (a hung query), or 'stopped'. */
const renewWithin = async (
  lease: SchedulerLease,
  ms: number,
  clock: Clock,
  signal: AbortSignal,
): Promise<Attempt> => {
  if (ms <= 0) return 'late';
  const timer = new AbortController();
  const stop = (): void => timer.abort();
  signal.addEventListener('abort', stop, { once: true });
  try {
    return await Promise.race([
      lease.renew().then(
        (held): Attempt => (held ? 'renewed' : 'lost'),
        (e: unknown): Attempt => (e instanceof Error ? e : new Error(String(e))),
      ),
      clock.sleep(ms, timer.signal).then(
        (): Attempt => 'late',
        (): Attempt => (signal.aborted ? 'stopped' : 'late'),
      ),
    ]);
  } finally {
    signal.removeEventListener('abort', stop);
    timer.abort();
  }
};

/**
 * Renews the lease every `timing.everyMs` and aborts `inner` (the leader's loops) when it was
 * taken by another process, or, with a TTL, when it could not be renewed in time: failed
 * renewals are retried until then. `heldFrom` is when the acquisition that made this process
 * leader started; `renewed` is told of every renewal.
 */
export const keepLease = async (
  lease: SchedulerLease,
  timing: LeaseTiming,
  clock: Clock,
  log: (line: string) => void,
  inner: AbortController,
  heldFrom: number,
  renewed: () => void,
): Promise<void> => {
  const now = (): number => clock.now().getTime();
  const hold = timing.ttlMs === undefined ? undefined : safeHoldMs(timing.ttlMs);
  let validFrom = heldFrom;
  let pause = timing.everyMs;
  while (!inner.signal.aborted) {
    await clock.sleep(pause, inner.signal).catch(() => undefined);
    if (inner.signal.aborted) return;
    const started = now();
    const r =
      hold === undefined
        ? await lease.renew().then(
            (held): Attempt => (held ? 'renewed' : 'lost'),
            (): Attempt => 'lost',
          )
        : await renewWithin(lease, validFrom + hold - started, clock, inner.signal);
    if (r === 'stopped') return;
    if (r === 'renewed') {
      validFrom = started;
      pause = timing.everyMs;
      renewed();
      continue;
    }
    if (r instanceof Error) {
      // still safely held: try again soon, and step down at the deadline if it keeps failing
      log(`scheduler: renewing the scheduler lease failed: ${r.message}; trying again`);
      pause = Math.min(RETRY_MS, timing.everyMs);
      continue;
    }
    log(
      r === 'lost'
        ? 'scheduler: another process took the scheduler lease; stepping down'
        : `scheduler: the scheduler lease was not renewed within ${hold} ms of its last renewal (is the database reachable?); stepping down before it can expire`,
    );
    inner.abort();
  }
};
