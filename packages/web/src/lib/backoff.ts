/**
 * Polling intervals for live pages: fast while something changes or runs, slower while nothing
 * does, and backing off on errors so a down server is not hammered (issue #8: polling with
 * back-off).
 */
export interface BackoffPolicy {
  /** Interval while active (a run is running). */
  readonly activeMs: number;
  /** Interval while idle. */
  readonly idleMs: number;
  /** Longest interval after repeated errors. */
  readonly maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { activeMs: 1000, idleMs: 5000, maxMs: 30_000 };

/** The next delay: `failures` consecutive errors double the base, up to `maxMs`. */
export const nextPollDelay = (
  policy: BackoffPolicy,
  state: { readonly active: boolean; readonly failures: number },
): number => {
  const base = state.active ? policy.activeMs : policy.idleMs;
  if (state.failures <= 0) return base;
  return Math.min(policy.maxMs, base * 2 ** Math.min(state.failures, 10));
};
