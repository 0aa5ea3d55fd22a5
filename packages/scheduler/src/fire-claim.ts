import type { Clock } from '@trellis/core';

/** The first pause before a store call that failed is tried again; it doubles. */
const FIRST_PAUSE_MS = 250;
const MAX_PAUSE_MS = 4_000;
/** A fire whose claim keeps failing is given up after this long (the lead is surely lost). */
export const CLAIM_GIVE_UP_MS = 60_000;

/**
 * Calls `op` until it answers, pausing 250 ms after a failure, doubling to 4 s; each failure is
 * told to `warn`. Undefined when it gave up: `signal` aborted (the lead was given up) or
 * {@link CLAIM_GIVE_UP_MS} passed.
 */
export const retrying = async <T>(
  op: () => Promise<T>,
  clock: Clock,
  signal: AbortSignal | undefined,
  warn: (message: string) => void,
): Promise<{ readonly value: T } | undefined> => {
  const start = clock.now().getTime();
  let pause = FIRST_PAUSE_MS;
  for (;;) {
    try {
      return { value: await op() };
    } catch (e) {
      const waited = clock.now().getTime() - start;
      if (signal?.aborted || waited + pause > CLAIM_GIVE_UP_MS) {
        warn(`${(e as Error).message}; given up after ${waited} ms`);
        return undefined;
      }
      warn(`${(e as Error).message}; trying again in ${pause} ms`);
      const slept = await clock.sleep(pause, signal).then(
        () => true,
        () => false,
      );
      if (!slept) return undefined;
      pause = Math.min(pause * 2, MAX_PAUSE_MS);
    }
  }
};

/**
 * Claims a fire across instances, trying again while the claim cannot be made (the database
 * away or slow, the pool exhausted, the lease a moment from renewal): a fire whose claim failed
 * once is not lost, and the ledger's key keeps a retried claim from doubling it. True when this
 * instance claimed it, false when another did; undefined when it gave up (see {@link retrying}:
 * the next leader resumes from the ledger).
 */
export const claimFire = async (
  claim: () => Promise<boolean>,
  clock: Clock,
  signal: AbortSignal | undefined,
  warn: (message: string) => void,
): Promise<boolean | undefined> =>
  (await retrying(claim, clock, signal, (m) => warn(`claiming it failed: ${m}`)))?.value;
