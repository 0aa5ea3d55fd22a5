import { isRefused } from '@trellis/coordinator/client';

/*
 * The worker outbox's rules as data (docs/decisions.md, "Worker outbox"): how long a running
 * report settles, how log chunks are grouped, and how a failed delivery is retried.
 */

/** Log chunks sent on one stream at most (bytes). */
export const BATCH_BYTES = 2 * 1024 * 1024;

/** A queued log item grows by appending contiguous bytes of the same file until this size. */
export const ITEM_BYTES = 256 * 1024;

/**
 * A report of a run still going waits this long, so a later report (each is the complete record)
 * can replace it: short runs cost the coordinator a few store writes, not one per state change.
 * A final report never waits, and it ends the wait of a running report ahead of it.
 */
export const SETTLE_MS = 20;

/**
 * Log chunks at the head of a lane are held back this long at most for the chunks of their run
 * that follow, so a run's last lines and the ones before them go together (on one stream, or in
 * its final report); a status report queued behind them ends the wait at once (it goes only once
 * the chunks before it are applied).
 */
export const LOG_HOLD_MS = 20;

/**
 * A run's last log chunks, up to this many bytes, ride in its final report to a coordinator that
 * takes them (one call instead of a stream and a call); more go on a stream first.
 */
export const CARRIED_BYTES = 256 * 1024;

/** The outbox holds at most this many bytes of messages unless configured. */
export const DEFAULT_OUTBOX_MAX_BYTES = 64 * 1024 * 1024;

/** Capped exponential back-off with jitter. */
export interface RetryPolicy {
  /** Wait before the first retry (ms). */
  readonly initialMs: number;
  /** Each retry waits this many times longer than the one before. */
  readonly factor: number;
  /** The wait never exceeds this (ms). */
  readonly maxMs: number;
  /** Fraction of the wait taken off at random (0: none, 0.5: between half and all of it). */
  readonly jitter: number;
}

/** How a worker retries delivering to its coordinator. */
export const DELIVERY_RETRY: RetryPolicy = { initialMs: 100, factor: 2, maxMs: 5_000, jitter: 0.5 };

/**
 * The wait before retry number `attempt` (0 for the first retry): `initialMs * factor^attempt`,
 * capped at `maxMs`, less up to `jitter` of it at random (`random()` in [0, 1)), so workers
 * that lost the same coordinator do not all come back in the same instant.
 */
export const retryDelayMs = (
  attempt: number,
  policy: RetryPolicy,
  random: () => number,
): number => {
  const capped = Math.min(policy.maxMs, policy.initialMs * policy.factor ** Math.max(0, attempt));
  return Math.round(capped * (1 - policy.jitter * random()));
};

/**
 * What a failed delivery means. `refused`: the coordinator rejected the message itself
 * (INVALID_ARGUMENT: sending it again cannot succeed). Every other failure (unreachable, timed out,
 * an internal error, a store that failed) is `retry`: the message is kept and sent again.
 */
export const failureKind = (e: unknown): 'retry' | 'refused' =>
  isRefused(e) ? 'refused' : 'retry';
