import { RunStatus } from '@trellis/core';
import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import {
  finishLine,
  followProgress,
  parseCommandArgs,
  stopOnSignals,
  withRuntime,
} from './common.js';

const USAGE = 'trellis restart <dag> [--run-id <id>]';

/**
 * `trellis restart`: stops a running run, waits until it ended and `restartWaitSec`, then starts a
 * new run from the same DAG snapshot and params, in the foreground.
 */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals } = parseCommandArgs(args, {
    'run-id': { type: 'string', short: 'r' },
  });
  if (values.help) {
    io.out(`usage: ${USAGE}`);
    return ExitCode.Ok;
  }
  const dag = positionals[0];
  if (!dag) {
    io.err(`trellis restart: name one DAG\nusage: ${USAGE}`);
    return ExitCode.Usage;
  }
  return withRuntime('restart', io, values, async (rt) => {
    const name = rt.dags.locate(dag, io.cwd) ? rt.dags.load(dag, io.cwd).dag.name : dag;
    const runId =
      values['run-id'] ??
      (await rt.store.listRuns({ name, status: RunStatus.Running, limit: 1 }))[0]?.dagRunId;
    if (!runId) {
      io.err(`trellis restart: DAG "${name}" has no running run to restart`);
      return ExitCode.Failure;
    }
    const current: { id?: string } = {};
    followProgress(rt, io, () => current.id);
    io.out(`stopping run ${runId} of DAG "${name}"`);
    const started = await rt.runs.restart({ name, dagRunId: runId });
    current.id = started.record.dagRunId;
    const id = current.id;
    io.out(`run ${id} of DAG "${name}" started (restart of ${runId})`);
    const unhook = stopOnSignals(io, () => rt.runs.stop({ name, dagRunId: id }));
    try {
      return finishLine(io, await started.done);
    } finally {
      unhook();
    }
  });
};

export const restartCommand: Command = {
  name: 'restart',
  summary: 'stop a running run and start it again',
  usage: USAGE,
  run,
};
