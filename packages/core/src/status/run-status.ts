/**
 * Status of a DAG run (spec: "States and transitions", run statuses, filter values 0-6).
 * Labels follow docs/decisions.md.
 */
export const RunStatus = {
  NotStarted: 0,
  Running: 1,
  Failed: 2,
  Cancelled: 3,
  Succeeded: 4,
  Queued: 5,
  PartiallySucceeded: 6,
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

/** Labels as the API returns them in `statusLabel`. */
export const runStatusLabel: Readonly<Record<RunStatus, string>> = {
  0: 'not started',
  1: 'running',
  2: 'failed',
  3: 'cancelled',
  4: 'finished',
  5: 'queued',
  6: 'partial success',
};

/** True for the statuses a run never leaves: failed, cancelled, finished, partial success. */
export const isFinalRunStatus = (s: RunStatus): boolean =>
  s === RunStatus.Failed ||
  s === RunStatus.Cancelled ||
  s === RunStatus.Succeeded ||
  s === RunStatus.PartiallySucceeded;

/** True when `n` is one of the integer run statuses 0-6. */
export const isRunStatus = (n: unknown): n is RunStatus =>
  typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 6;
