import type { Command } from './command.js';
import { validateCommand } from './validate.js';
import { restartCommand } from './restart.js';
import { retryCommand } from './retry.js';
import { stopCommand } from './stop.js';
import { statusCommand } from './status.js';
import { dryCommand } from './dry.js';
import { startCommand } from './start.js';
import { serverCommand, startAllCommand } from './server.js';
import { cleanupCommand } from './cleanup.js';
import { migrateHistoryCommand } from './migrate-history.js';

const later = (name: string, summary: string, usage: string, arrivesWith: string): Command => ({
  name,
  summary,
  usage,
  arrivesWith,
});

const QUEUES = 'scheduling and queues (issue #5)';
const FLEET = 'distributed mode (issue #6)';

/** Every subcommand, in the order `trellis --help` lists them. */
export const COMMANDS: readonly Command[] = [
  validateCommand,
  startCommand,
  dryCommand,
  statusCommand,
  stopCommand,
  retryCommand,
  restartCommand,
  later(
    'enqueue',
    'put a run of a DAG on its queue',
    'trellis enqueue <dag> [--queue <q>] [--run-id <id>] [-- params...]',
    QUEUES,
  ),
  later('dequeue', 'take a queued run off its queue', 'trellis dequeue <name>:<runId>', QUEUES),
  later('scheduler', 'run the cron scheduler and queue processor', 'trellis scheduler', QUEUES),
  serverCommand,
  startAllCommand,
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
  migrateHistoryCommand,
  cleanupCommand,
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
