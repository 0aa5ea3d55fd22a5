import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { dagNameOf, parseCommandArgs, withRuntime } from './common.js';
import type { FlagSpecs } from './flags.js';
import { runInForeground } from './foreground.js';
import { RUN_ID_OPTION } from './run-flags.js';

const USAGE = 'trellis retry <dag> --run-id <id> [--step <name>] [--new-run-id <id>]';

const OPTIONS = {
  'run-id': {
    ...RUN_ID_OPTION['run-id'],
    description: 'the run to retry (required)',
    example: 'trellis retry etl --run-id build-1234',
  },
  'new-run-id': {
    type: 'string',
    value: '<id>',
    description: "the new run's id (default: a generated UUIDv7)",
    example: 'trellis retry etl --run-id build-1234 --new-run-id build-1234-r1',
  },
  step: {
    type: 'string',
    value: '<name>',
    description: 'run again only this step (the others keep their result)',
    example: 'trellis retry etl --run-id build-1234 --step load',
  },
} as const satisfies FlagSpecs;

/**
 * `trellis retry`: a new run from the original's DAG snapshot and params; succeeded steps keep
 * their result; with `--step` only that step runs again. Foreground, like start.
 */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals } = parseCommandArgs(args, OPTIONS);
  const dag = positionals[0];
  const runId = values['run-id'];
  if (!dag || !runId) {
    io.err(`trellis retry: name the DAG and the run to retry (--run-id)\nusage: ${USAGE}`);
    return ExitCode.Usage;
  }
  return withRuntime('retry', io, values, async (rt) => {
    const name = dagNameOf(rt, dag, io.cwd);
    return runInForeground(
      rt,
      io,
      () =>
        rt.runs.retry(
          { name, dagRunId: runId },
          {
            ...(values.step ? { stepName: values.step } : {}),
            ...(values['new-run-id'] ? { newRunId: values['new-run-id'] } : {}),
          },
        ),
      (r) => `run ${r.dagRunId} of DAG "${name}" started as a retry of ${runId}`,
    );
  });
};

export const retryCommand: Command = {
  name: 'retry',
  summary: "re-run a run's failed steps as a new run",
  usage: USAGE,
  options: OPTIONS,
  run,
};
