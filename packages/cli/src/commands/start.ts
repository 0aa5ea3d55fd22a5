import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { paramsFrom, parseCommandArgs, runInForeground, withRuntime } from './common.js';

const USAGE = 'trellis start <dag> [--run-id <id>] [-p "<params>"] [-- params...]';

/** `trellis start`: runs a DAG now in the foreground; exit 0 when it finished, 1 otherwise. */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals, rest } = parseCommandArgs(args, {
    'run-id': { type: 'string', short: 'r' },
    params: { type: 'string', short: 'p' },
  });
  if (values.help) {
    io.out(`usage: ${USAGE}`);
    return ExitCode.Ok;
  }
  const dag = positionals[0];
  if (!dag || positionals.length > 1) {
    io.err(`trellis start: name one DAG (a name in the DAGs folder or a file)\nusage: ${USAGE}`);
    return ExitCode.Usage;
  }
  return withRuntime('start', io, values, async (rt) => {
    const params = paramsFrom(values.params, rest);
    return runInForeground(
      rt,
      io,
      () =>
        rt.runs.start({
          dag,
          baseDir: io.cwd,
          ...(params !== undefined ? { params } : {}),
          ...(values['run-id'] ? { dagRunId: values['run-id'] } : {}),
        }),
      (r) => `run ${r.dagRunId} of DAG "${r.name}" started`,
    );
  });
};

export const startCommand: Command = {
  name: 'start',
  summary: 'run a DAG now, in the foreground',
  usage: USAGE,
  run,
};
