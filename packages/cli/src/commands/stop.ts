import { RunStatus } from '@trellis/core';
import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { parseCommandArgs, withRuntime, dagNameOf } from './common.js';
import { RUN_ID_OPTION } from './run-flags.js';

const USAGE = 'trellis stop <dag> [--run-id <id>]';

/** `trellis stop`: asks the process running a run (or every running run of the DAG) to stop it. */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals } = parseCommandArgs(args, RUN_ID_OPTION);
  const dag = positionals[0];
  if (!dag) {
    io.err(`trellis stop: name one DAG\nusage: ${USAGE}`);
    return ExitCode.Usage;
  }
  return withRuntime('stop', io, values, async (rt) => {
    const name = dagNameOf(rt, dag, io.cwd);
    const ids = values['run-id']
      ? [values['run-id']]
      : (await rt.store.listRuns({ name, status: RunStatus.Running })).map((r) => r.dagRunId);
    if (ids.length === 0) {
      io.err(`trellis stop: DAG "${name}" has no running run`);
      return ExitCode.Failure;
    }
    for (const dagRunId of ids) {
      await rt.runs.stop({ name, dagRunId });
      io.out(`stop requested for run ${dagRunId} of DAG "${name}"`);
    }
    return ExitCode.Ok;
  });
};

export const stopCommand: Command = {
  name: 'stop',
  summary: 'stop a running run',
  usage: USAGE,
  options: RUN_ID_OPTION,
  run,
};
