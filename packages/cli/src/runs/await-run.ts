import { ExitCode } from '../io.js';
import { followUntilFinal } from './follow-logs.js';
import { reportFinal, type Output } from './report.js';
import type { RunRef, RunSource } from './run-source.js';
import { waitForFinal } from './wait-final.js';

/** How `--wait`, `--follow` and `--wait-timeout` ask a command to wait for its run. */
export interface WaitOptions {
  /** Print the steps' output while waiting. */
  readonly follow: boolean;
  /** Give up waiting after this long (the run goes on). */
  readonly timeoutMs?: number | undefined;
}

/**
 * Waits for the run (following its output with `follow`) and reports how it ended: the exit code
 * of its result, or {@link ExitCode.WaitTimeout} when the timeout passed first.
 */
export const awaitAndReport = async (
  source: RunSource,
  ref: RunRef,
  o: Output,
  w: WaitOptions,
): Promise<ExitCode> => {
  const opts = { timeoutMs: w.timeoutMs };
  const outcome = w.follow
    ? await followUntilFinal(source, ref, { stdout: o.out, stderr: o.err }, opts)
    : await waitForFinal(source, ref, opts);
  const d = outcome.details;
  if (outcome.timedOut) {
    o.err(
      `run ${d.dagRunId} of DAG "${d.name}" is still ${d.statusLabel} after --wait-timeout ${(w.timeoutMs ?? 0) / 1000}s; it goes on (trellis stop ends it)`,
    );
    o.json(d);
    return ExitCode.WaitTimeout;
  }
  return reportFinal(source, d, o);
};
