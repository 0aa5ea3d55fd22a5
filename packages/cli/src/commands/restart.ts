import { RunStatus } from '@trellis/core';
import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { dagNameOf, parseCommandArgs, withRuntime } from './common.js';
import { runInForeground } from './foreground.js';
import { RUN_ID_OPTION } from './run-flags.js';

const USAGE = 'trellis restart <dag> [--run-id <id>]';

/**
 * `trellis restart`: stops a running run, waits until it ended and `restartWaitSec`, then starts a
 * new run from the same DAG snapshot and params, in the foreground.
 */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals } = parseCommandArgs(args, RUN_ID_OPTION);
  const dag = positionals[0];
  if (!dag) {
    io.err(`trellis restart: name one DAG\nusage: ${USAGE}`);
    return ExitCode.Usage;
  }
  return withRuntime('restart', io, values, async (rt) => {
    const name = dagNameOf(rt, dag, io.cwd);
    const runId =
      values['run-id'] ??
      (await rt.store.listRuns({ name, status: RunStatus.Running, limit: 1 }))[0]?.dagRunId;
    if (!runId) {
      io.err(`trellis restart: DAG "${name}" has no running run to restart`);
      return ExitCode.Failure;
    }
    io.out(`stopping run ${runId} of DAG "${name}"`);
    return runInForeground(
      rt,
      io,
      () => rt.runs.restart({ name, dagRunId: runId }),
      (r) => `run ${r.dagRunId} of DAG "${name}" started (restart of ${runId})`,
    );
  });
};

export const restartCommand: Command = {
  name: 'restart',
  summary: 'stop a running run and start it again',
  usage: USAGE,
  options: RUN_ID_OPTION,
  run,
};
