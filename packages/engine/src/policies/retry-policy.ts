import type { RetryPolicy } from '@trellis/spec';
import { backoffDelayMs } from './backoff.js';

/** A retry policy with its run-time expressions (`${RETRIES}`) already resolved to numbers. */
export interface ResolvedRetryPolicy {
  readonly limit: number;
  readonly intervalSec: number;
  readonly backoff: number;
  readonly maxIntervalSec: number;
  readonly exitCode: readonly number[];
}

/** Resolves `limit` and `intervalSec` that were written as variable references. */
export const resolveRetryPolicy = (
  p: RetryPolicy,
  expand: (text: string) => string,
): ResolvedRetryPolicy => {
  const num = (v: number | string): number => {
    if (typeof v === 'number') return v;
    const n = Number(expand(v).trim());
    return Number.isFinite(n) && n >= 0 ? Math.floor(n) : 0;
  };
  return {
    limit: num(p.limit),
    intervalSec: num(p.intervalSec),
    backoff: p.backoff,
    maxIntervalSec: p.maxIntervalSec,
    exitCode: p.exitCode,
  };
};

/**
 * Whether a failed execution is retried (as the peer does): retries left, and the exit code
 * qualifies (listed in `exitCode`, or any non-zero code when the list is empty). A signal counts
 * as exit code -1, which qualifies only through the "any non-zero" rule.
 */
export const shouldRetry = (
  p: ResolvedRetryPolicy,
  retryCount: number,
  exitCode: number | null,
): boolean => {
  if (retryCount >= p.limit) return false;
  const code = exitCode ?? -1;
  return p.exitCode.length > 0 ? p.exitCode.includes(code) : code !== 0;
};

/** Milliseconds to wait before retry number `retryCount + 1`. */
export const retryDelayMs = (p: ResolvedRetryPolicy, retryCount: number): number =>
  backoffDelayMs(p.intervalSec, p.backoff, retryCount, p.maxIntervalSec);
