import { ExitCode, type CliIo } from '../io.js';
import {
  dagAndChoiceOf,
  NAME_ONE_DAG_OR_FILE,
  SERVER_OPTIONS,
  WAIT_OPTIONS,
} from './client-flags.js';
import type { Command } from './command.js';
import { paramsFrom, parseCommandArgs, withRuntime } from './common.js';
import { runInForeground } from './foreground.js';
import { remoteStart } from './remote-start.js';
import { NEW_RUN_OPTIONS } from './run-flags.js';

const USAGE =
  'trellis start <dag> [--run-id <id>] [-p "<params>"] [--server <url> [--token <t>]] [--wait] [--wait-timeout <s>] [--follow] [--json] [-- params...]';

const OPTIONS = { ...NEW_RUN_OPTIONS, ...SERVER_OPTIONS, ...WAIT_OPTIONS } as const;

/**
 * `trellis start`: without --server, runs a DAG now in this process, in the foreground; with
 * --server, starts it on that server and (with --wait/--follow) waits for its result.
 */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals, rest } = parseCommandArgs(args, OPTIONS);
  const named = dagAndChoiceOf('start', USAGE, positionals, values, io, NAME_ONE_DAG_OR_FILE);
  if (!named) return ExitCode.Usage;
  const { dag, choice } = named;
  const params = paramsFrom(values.params, rest);
  if (choice.server !== undefined)
    return remoteStart(
      io,
      { ...choice, server: choice.server },
      { kind: 'start', dag, params, dagRunId: values['run-id'] },
    );
  return withRuntime('start', io, values, async (rt) =>
    runInForeground(
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
      choice,
    ),
  );
};

export const startCommand: Command = {
  name: 'start',
  summary: 'run a DAG now: in the foreground, or on a server with --server',
  usage: USAGE,
  details: [
    'Without --server the run executes in this process and the command waits for it; with',
    '--server it executes on the server, and the command returns once it started unless',
    '--wait, --wait-timeout or --follow ask it to wait. For a failed run it prints the error of',
    'each failed step and the last lines of its stderr. Exit codes: 0 finished, 1 failed or',
    'partial success (or the request was refused), 2 usage, 3 cancelled, 4 --wait-timeout',
    'passed, 5 the server could not be used, 6 the run was only queued (local, without --wait).',
  ].join('\n'),
  options: OPTIONS,
  run,
};
