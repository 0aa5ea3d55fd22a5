import { ExitCode, type CliIo } from '../io.js';
import { awaitAndReport } from '../runs/await-run.js';
import { outputOf } from '../runs/report.js';
import { localRunSource } from '../runs/run-source.js';
import {
  dagAndChoiceOf,
  NAME_ONE_DAG_OR_FILE,
  SERVER_OPTIONS,
  WAIT_OPTIONS,
} from './client-flags.js';
import type { Command } from './command.js';
import { paramsFrom, parseCommandArgs, withRuntime } from './common.js';
import { remoteStart } from './remote-start.js';
import { NEW_RUN_OPTIONS } from './run-flags.js';

const USAGE =
  'trellis enqueue <dag> [--queue <q>] [--run-id <id>] [-p "<params>"] [--server <url> [--token <t>]] [--wait] [--wait-timeout <s>] [--follow] [--json] [-- params...]';

const OPTIONS = {
  ...NEW_RUN_OPTIONS,
  queue: {
    type: 'string',
    short: 'q',
    value: '<queue>',
    description: "the queue to wait in (default: the DAG's queue: field, else its own queue)",
    example: 'trellis enqueue etl --queue batch',
  },
  ...SERVER_OPTIONS,
  ...WAIT_OPTIONS,
} as const;

/**
 * `trellis enqueue`: puts a run of a DAG on its queue (or `--queue`), locally or on `--server`;
 * the process running the queues (`trellis start-all` or `trellis scheduler`) starts it in its
 * turn. Returns at once unless told to wait.
 */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals, rest } = parseCommandArgs(args, OPTIONS);
  const named = dagAndChoiceOf('enqueue', USAGE, positionals, values, io, NAME_ONE_DAG_OR_FILE);
  if (!named) return ExitCode.Usage;
  const { dag, choice } = named;
  const params = paramsFrom(values.params, rest);
  if (choice.server !== undefined)
    return remoteStart(
      io,
      { ...choice, server: choice.server },
      { kind: 'enqueue', dag, params, dagRunId: values['run-id'], queue: values.queue },
    );
  return withRuntime('enqueue', io, values, async (rt) => {
    const started = await rt.runs.start({
      dag,
      baseDir: io.cwd,
      trigger: 'enqueue',
      ...(params !== undefined ? { params } : {}),
      ...(values['run-id'] ? { dagRunId: values['run-id'] } : {}),
      ...(values.queue ? { queue: values.queue } : {}),
    });
    const r = started.record;
    const o = outputOf(io, choice.json);
    const source = localRunSource(rt);
    const ref = { name: r.name, dagRunId: r.dagRunId };
    o.out(`run ${r.dagRunId} of DAG "${r.name}" queued in queue "${r.queue}"`);
    if (choice.wait) return awaitAndReport(source, ref, o, choice);
    o.json(await source.details(ref));
    return ExitCode.Ok;
  });
};

export const enqueueCommand: Command = {
  name: 'enqueue',
  summary: 'put a run of a DAG on its queue, locally or on a server',
  usage: USAGE,
  details: [
    'The run starts when the process running the queues (trellis start-all, trellis scheduler)',
    'gives it its turn. Exit codes as for start: 0 queued (or, waiting, finished), 1 failed,',
    '2 usage, 3 cancelled, 4 --wait-timeout passed, 5 the server could not be used.',
  ].join('\n'),
  options: OPTIONS,
  run,
};
