import type { ExecutionOutcome } from '../../ports/executor.js';
import { trimOutput } from '../../vars/output.js';

/** One execution attempt's result, before policies decide. */
export interface AttemptResult {
  readonly ok: boolean;
  readonly partial: boolean;
  readonly cancelled: boolean;
  readonly exitCode: number | null;
  readonly error: string;
  /** Trimmed captured stdout, for `output`. */
  readonly output?: string;
  /** Captured stdout as written, for `continueOn.output` and repeat conditions. */
  readonly rawOutput?: string;
}

/** The common part of a failed attempt; spread it and add the `error`. */
export const FAILED: Omit<AttemptResult, 'error'> = {
  ok: false,
  partial: false,
  cancelled: false,
  exitCode: null,
};

/** An attempt that the run's stop or timeout ended. */
export const stoppedResult = (outcome: ExecutionOutcome): AttemptResult => ({
  ...FAILED,
  cancelled: true,
  exitCode: outcome.exitCode,
  error: outcome.signal ? `stopped (signal ${outcome.signal})` : 'stopped',
});

/**
 * The result of an execution that ran to its end. `wantsOutput` is the step's `output` (a capture
 * past `maxOutputSize` then fails the step; the full output is in its log).
 */
export const resultOfOutcome = (
  outcome: ExecutionOutcome,
  wantsOutput: boolean,
  maxOutputSize: number,
): AttemptResult => {
  const raw = outcome.output;
  if (outcome.outputExceeded && wantsOutput) {
    return {
      ...FAILED,
      exitCode: outcome.exitCode,
      error: `output exceeded the maximum size of ${maxOutputSize} bytes (maxOutputSize); the full output is in the step's log`,
      ...(raw !== undefined ? { rawOutput: raw } : {}),
    };
  }
  const ok = outcome.exitCode === 0 && !outcome.error;
  const error = ok
    ? ''
    : (outcome.error ??
      (outcome.signal
        ? `killed by signal ${outcome.signal}`
        : `exit status ${outcome.exitCode ?? 'unknown'}`));
  return {
    ok,
    partial: false,
    cancelled: false,
    exitCode: outcome.exitCode,
    error,
    ...(raw !== undefined ? { output: trimOutput(raw), rawOutput: raw } : {}),
  };
};
