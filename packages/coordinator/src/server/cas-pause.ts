import type { Clock } from '@trellis/core';

/** The longest pause between two compare-and-swap attempts of one write (ms). */
const MAX_PAUSE_MS = 50;

/**
 * The pause before attempt `n` (from 0) of a compare-and-swap write that found the record
 * changed: none before the first retry (a stop or claim that landed: the re-read decides), then
 * 2, 4, 8 ... up to 50 ms. The file store also answers "changed" while another process holds a
 * run's swap lock (up to 10 s when that process crashed): retries must not spin on the disk.
 */
export const casPause = (clock: Clock, n: number): Promise<void> =>
  n <= 1 ? Promise.resolve() : clock.sleep(Math.min(2 ** (n - 1), MAX_PAUSE_MS));
