import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { paramsFrom, parseCommandArgs, withRuntime } from './common.js';

const USAGE = 'trellis enqueue <dag> [--queue <q>] [--run-id <id>] [-p "<params>"] [-- params...]';

/**
 * `trellis enqueue`: puts a run of a DAG on its queue (or `--queue`) and returns; the process
 * running the queues (`trellis start-all` or `trellis scheduler`) starts it in its turn.
 */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals, rest } = parseCommandArgs(args, {
    'run-id': { type: 'string', short: 'r' },
    params: { type: 'string', short: 'p' },
    queue: { type: 'string', short: 'q' },
  });
  if (values.help) {
    io.out(`usage: ${USAGE}`);
    return ExitCode.Ok;
  }
  const dag = positionals[0];
  if (!dag || positionals.length > 1) {
    io.err(`trellis enqueue: name one DAG (a name in the DAGs folder or a file)\nusage: ${USAGE}`);
    return ExitCode.Usage;
  }
  return withRuntime('enqueue', io, values, async (rt) => {
    const params = paramsFrom(values.params, rest);
    const started = await rt.runs.start({
      dag,
      baseDir: io.cwd,
      trigger: 'enqueue',
      ...(params !== undefined ? { params } : {}),
      ...(values['run-id'] ? { dagRunId: values['run-id'] } : {}),
      ...(values.queue ? { queue: values.queue } : {}),
    });
    const r = started.record;
    io.out(`run ${r.dagRunId} of DAG "${r.name}" queued in queue "${r.queue}"`);
    return ExitCode.Ok;
  });
};

export const enqueueCommand: Command = {
  name: 'enqueue',
  summary: 'put a run of a DAG on its queue',
  usage: USAGE,
  run,
};
