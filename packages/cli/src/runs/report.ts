import type { ApiRunDetails } from '@trellis/contract';
import { NodeStatus, RunStatus } from '@trellis/core/status'; // not the contract's zod schemas
import { ExitCode } from '../io.js';
import { nodesOf } from './follow-logs.js';
import type { RunSource } from './run-source.js';

/** Lines of a failed step's stderr shown after the run. */
const STDERR_TAIL_LINES = 20;

/**
 * The exit code that tells a run's result: 0 finished, 1 failed or partial success, 3 cancelled;
 * a run that is not final yet (running, queued, not started) gives 0 (nothing failed so far).
 */
export const exitCodeFor = (status: number): ExitCode => {
  switch (status) {
    case RunStatus.Failed:
    case RunStatus.PartiallySucceeded:
      return ExitCode.Failure;
    case RunStatus.Cancelled:
      return ExitCode.Cancelled;
    default:
      return ExitCode.Ok;
  }
};

/**
 * For every failed step (and handler) of the run: its error and the last
 * {@link STDERR_TAIL_LINES} lines of its stderr, each on its own line for `err`.
 */
const reportFailedSteps = async (
  source: RunSource,
  d: ApiRunDetails,
  err: (line: string) => void,
): Promise<void> => {
  const ref = { name: d.name, dagRunId: d.dagRunId };
  for (const node of nodesOf(d)) {
    if (node.status !== NodeStatus.Failed) continue;
    err(`step "${node.step.name}" failed: ${node.error || '(no error message)'}`);
    let tail;
    try {
      tail = await source.stepLog(ref, node.step.name, 'stderr', { tail: STDERR_TAIL_LINES });
    } catch (e) {
      err(`  (its stderr could not be read: ${(e as Error).message})`);
      continue;
    }
    if (!tail || tail.lineCount === 0) {
      err('  (its stderr is empty)');
      continue;
    }
    err(
      `  ${tail.hasMore ? `last ${tail.lineCount} lines of its stderr` : 'its stderr'} (${node.stderr}):`,
    );
    for (const line of tail.content.split('\n').slice(0, tail.lineCount)) err(`  | ${line}`);
  }
};

/** Where a command's lines go: `out` for human lines (stderr with `--json`), `json` for JSON. */
export interface Output {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** Prints the run details as JSON on stdout, when `--json` asked for it; else nothing. */
  readonly json: (d: ApiRunDetails) => void;
}

/**
 * The end of a run the command waited for: the closing line, the log path, the failed steps'
 * errors and stderr tails, the JSON when asked; returns the exit code of its result.
 */
export const reportFinal = async (
  source: RunSource,
  d: ApiRunDetails,
  o: Output,
): Promise<ExitCode> => {
  o.out(`run ${d.dagRunId} of DAG "${d.name}": ${d.statusLabel}${d.error ? ` (${d.error})` : ''}`);
  o.out(`log: ${d.log}`);
  await reportFailedSteps(source, d, o.err);
  o.json(d);
  return exitCodeFor(d.status);
};

/** The Output of a command: with `json`, human lines go to stderr and stdout holds only JSON. */
export const outputOf = (
  io: { out: (l: string) => void; err: (l: string) => void },
  json: boolean,
): Output => ({
  out: json ? io.err : io.out,
  err: io.err,
  json: json ? (d) => io.out(JSON.stringify(d, null, 2)) : () => undefined,
});
