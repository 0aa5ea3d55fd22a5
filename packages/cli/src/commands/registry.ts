import type { Command } from './command.js';
import { validateCommand } from './validate.js';

const later = (name: string, summary: string, usage: string, arrivesWith: string): Command => ({
  name,
  summary,
  usage,
  arrivesWith,
});

const ENGINE = 'the execution engine (issue #3)';
const API = 'the REST API and server processes (issue #4)';
const QUEUES = 'scheduling and queues (issue #5)';
const FLEET = 'distributed mode (issue #6)';
const OPS = 'operations tooling (issue #9)';

/** Every subcommand, in the order `trellis --help` lists them. */
export const COMMANDS: readonly Command[] = [
  validateCommand,
  later(
    'start',
    'run a DAG now, in the foreground',
    'trellis start <dag> [--run-id <id>] [-- params...]',
    ENGINE,
  ),
  later('dry', 'run a DAG without executing commands', 'trellis dry <dag> [-- params...]', ENGINE),
  later(
    'status',
    "show a run's status and steps",
    'trellis status <dag> [--run-id <id>] [--json]',
    ENGINE,
  ),
  later('stop', 'stop a running run', 'trellis stop <dag> [--run-id <id>]', ENGINE),
  later(
    'retry',
    "re-run a run's failed steps as a new run",
    'trellis retry <dag> --run-id <id> [--step <name>]',
    ENGINE,
  ),
  later(
    'restart',
    'stop a running run and start it again',
    'trellis restart <dag> [--run-id <id>]',
    ENGINE,
  ),
  later(
    'enqueue',
    'put a run of a DAG on its queue',
    'trellis enqueue <dag> [--queue <q>] [--run-id <id>] [-- params...]',
    QUEUES,
  ),
  later('dequeue', 'take a queued run off its queue', 'trellis dequeue <name>:<runId>', QUEUES),
  later('scheduler', 'run the cron scheduler and queue processor', 'trellis scheduler', QUEUES),
  later(
    'server',
    'serve the REST API and web UI',
    'trellis server [--host <h>] [--port <p>] [--dags <dir>]',
    API,
  ),
  later(
    'start-all',
    'server, scheduler and local execution in one process',
    'trellis start-all [--host <h>] [--port <p>] [--dags <dir>]',
    API,
  ),
  later(
    'coordinator',
    'track workers over gRPC and dispatch runs to them',
    'trellis coordinator',
    FLEET,
  ),
  later(
    'worker',
    'run DAG runs dispatched by a coordinator',
    'trellis worker --coordinator <host:port> --labels k=v,... [--id <id>] [--concurrency N]',
    FLEET,
  ),
  later(
    'migrate history',
    'import run history of the 1.16 file format',
    'trellis migrate history',
    OPS,
  ),
  later(
    'cleanup',
    'delete run history older than a number of days',
    'trellis cleanup --older-than <days>',
    OPS,
  ),
];

/** The command named by the first one or two words of `args`, with the rest of the arguments. */
export const findCommand = (
  args: readonly string[],
): { command: Command; rest: string[] } | undefined => {
  const two = args.slice(0, 2).join(' ');
  const byTwo = COMMANDS.find((c) => c.name === two);
  if (byTwo) return { command: byTwo, rest: args.slice(2) };
  const byOne = COMMANDS.find((c) => c.name === args[0]);
  return byOne ? { command: byOne, rest: args.slice(1) } : undefined;
};
