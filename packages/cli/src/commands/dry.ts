import { RunStatus } from '@trellis/core';
import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { paramsFrom, parseCommandArgs, withRuntime } from './common.js';
import type { FlagSpecs } from './flags.js';

const USAGE = 'trellis dry <dag> [-p "<params>"] [-- params...]';

const OPTIONS = {
  params: {
    type: 'string',
    short: 'p',
    value: '"<params>"',
    description:
      'params: NAME=value and positional words, or a JSON object; words after -- are added and win',
    example: 'trellis dry etl -p "DATE=2024-01-31"',
  },
} as const satisfies FlagSpecs;

/** `trellis dry`: everything but executing commands; nothing is stored; the plan is printed. */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals, rest } = parseCommandArgs(args, OPTIONS);
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
  options: OPTIONS,
  run,
};
