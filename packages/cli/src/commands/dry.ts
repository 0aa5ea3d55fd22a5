import { RunStatus } from '@trellis/core';
import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { paramsFrom, parseCommandArgs, withRuntime } from './common.js';

const USAGE = 'trellis dry <dag> [-p "<params>"] [-- params...]';

/** `trellis dry`: everything but executing commands; nothing is stored; the plan is printed. */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals, rest } = parseCommandArgs(args, {
    params: { type: 'string', short: 'p' },
  });
  if (values.help) {
    io.out(`usage: ${USAGE}`);
    return ExitCode.Ok;
  }
  const dag = positionals[0];
  if (!dag) {
    io.err(`trellis dry: name one DAG\nusage: ${USAGE}`);
    return ExitCode.Usage;
  }
  return withRuntime('dry', io, values, async (rt) => {
    const params = paramsFrom(values.params, rest);
    const started = await rt.runs.start({
      dag,
      baseDir: io.cwd,
      dryRun: true,
      onLog: (line) => io.out(line),
      ...(params !== undefined ? { params } : {}),
    });
    const r = await started.done;
    return r.status === RunStatus.Succeeded ? ExitCode.Ok : ExitCode.Failure;
  });
};

export const dryCommand: Command = {
  name: 'dry',
  summary: 'run a DAG without executing commands',
  usage: USAGE,
  run,
};
