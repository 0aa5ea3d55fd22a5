import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { dagNameOf, parseCommandArgs, runInForeground, withRuntime } from './common.js';

const USAGE = 'trellis retry <dag> --run-id <id> [--step <name>] [--new-run-id <id>]';

/**
 * `trellis retry`: a new run from the original's DAG snapshot and params; succeeded steps keep
 * their result; with `--step` only that step runs again. Foreground, like start.
 */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals } = parseCommandArgs(args, {
    'run-id': { type: 'string', short: 'r' },
    'new-run-id': { type: 'string' },
    step: { type: 'string' },
  });
  if (values.help) {
    io.out(`usage: ${USAGE}`);
    return ExitCode.Ok;
  }
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
  run,
};
