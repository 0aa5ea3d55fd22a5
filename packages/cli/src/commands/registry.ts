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
import { migrateStoreCommand } from './migrate-store.js';
import { dbMigrateCommand, dbStatusCommand } from './db.js';
import { coordinatorCommand } from './coordinator.js';
import { workerCommand } from './worker.js';
import { certsCommand } from './certs.js';
import { enqueueCommand } from './enqueue.js';
import { dequeueCommand } from './dequeue.js';
import { schedulerCommand } from './scheduler.js';

/** Every subcommand, in the order `trellis --help` lists them. */
export const COMMANDS: readonly Command[] = [
  validateCommand,
  startCommand,
  dryCommand,
  statusCommand,
  stopCommand,
  retryCommand,
  restartCommand,
  enqueueCommand,
  dequeueCommand,
  schedulerCommand,
  serverCommand,
  startAllCommand,
  coordinatorCommand,
  workerCommand,
  certsCommand,
  migrateHistoryCommand,
  migrateStoreCommand,
  dbMigrateCommand,
  dbStatusCommand,
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
