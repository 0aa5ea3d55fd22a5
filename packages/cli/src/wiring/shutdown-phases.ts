/**
 * How long a stop may go on past the runs' grace period (webhooks, the fleet, the tracer and the
 * store closing) before the process gives up on it: an operator's SIGTERM always ends it.
 */
export const SHUTDOWN_SLACK_MS = 15_000;

/** One part of a shutdown: its name as a message says it, and how it stops. */
export type StopPhase = readonly [name: string, stop: () => Promise<unknown>];

/**
 * Runs `phases` one after the other. When they have not all ended `deadlineMs` after the call,
 * `onLate` is called (once) with the name of the phase still running: the caller says so and
 * exits instead of hanging. Resolves when every phase ended; a phase that throws ends the stop
 * with its error (the later phases do not run).
 */
export const stopInPhases = async (
  phases: readonly StopPhase[],
  deadlineMs: number,
  onLate: (phase: string) => void,
): Promise<void> => {
  let current = '';
  const timer = setTimeout(() => onLate(current), deadlineMs);
  try {
    for (const [name, stop] of phases) {
      current = name;
      await stop();
    }
  } finally {
    clearTimeout(timer);
  }
};
