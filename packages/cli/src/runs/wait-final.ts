import type { ApiRunDetails } from '@trellis/contract';
import { isFinalRunStatus, type RunStatus } from '@trellis/core/status'; // not the zod schemas
import type { RunRef, RunSource } from './run-source.js';

/** How long one long-poll asks the server to hold the answer, at most (seconds). */
const LONG_POLL_SEC = 30;
/** The pause before asking again when the answer came at once (a server without long-poll). */
export const POLL_PAUSE_MS = 250;

/** How a wait ended: the last details seen, and whether the wait timed out first. */
export interface WaitOutcome {
  readonly details: ApiRunDetails;
  readonly timedOut: boolean;
}

/** Time, for tests to replace. */
export interface WaitClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realClock: WaitClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export const isFinal = (d: ApiRunDetails): boolean => isFinalRunStatus(d.status as RunStatus);

/**
 * Waits until the run is final, or `timeoutMs` passed (then `timedOut`). Asks with
 * `waitFor=final&timeout=<s>` (at most {@link LONG_POLL_SEC}); an answer that is not final and
 * came before that timeout means the server does not long-poll, so the next ask waits
 * {@link POLL_PAUSE_MS} first.
 */
export const waitForFinal = async (
  source: RunSource,
  ref: RunRef,
  opts: { timeoutMs?: number | undefined; clock?: WaitClock } = {},
): Promise<WaitOutcome> => {
  const clock = opts.clock ?? realClock;
  const deadline = opts.timeoutMs === undefined ? Infinity : clock.now() + opts.timeoutMs;
  for (;;) {
    const left = deadline - clock.now();
    const waitSec = Math.max(1, Math.min(LONG_POLL_SEC, Math.ceil(left / 1000)));
    const asked = clock.now();
    const details = await source.details(ref, waitSec);
    if (isFinal(details)) return { details, timedOut: false };
    const now = clock.now();
    if (now >= deadline) return { details, timedOut: true };
    if (now - asked < waitSec * 1000)
      await clock.sleep(Math.min(POLL_PAUSE_MS, Math.max(0, deadline - now)));
  }
};
