import { systemClock } from '@trellis/core';
import { ExitCode, type CliIo } from '../io.js';
import { SHUTDOWN_GRACE_MS, shutdownSignal } from '../wiring/shutdown.js';
import type { Command } from './command.js';
import { parseCommandArgs } from './common.js';

const USAGE = 'trellis scheduler [--dags <dir>] [--home <dir>] [--config <file>]';

/**
 * `trellis scheduler`: the cron loop, the queue processor and the zombie detector without the
 * API; runs it starts execute in this process. One scheduler per store is active; others stand by.
 */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals } = parseCommandArgs(args, {});
  if (positionals.length > 0) {
    io.err(
      `trellis scheduler: unexpected argument ${JSON.stringify(positionals[0])}\nusage: ${USAGE}`,
    );
    return ExitCode.Usage;
  }
  // the wiring is loaded only by the commands that need it (CLI start-up time)
  const { dagDefinitionsOf, ensureFolders, makeRuntime } = await import('../wiring/runtime.js');
  const { startSchedulerRole } = await import('../wiring/scheduler-role.js');
  const rt = await makeRuntime(
    io,
    { home: values.home, config: values.config, dags: values.dags },
    { spawner: true },
  );
  const { config } = rt;
  ensureFolders(config);
  const defs = dagDefinitionsOf(rt, systemClock);
  const stop = new AbortController();
  const role = await startSchedulerRole(rt, defs, systemClock, (l) => io.err(l), stop.signal);
  io.out(`Trellis scheduler for DAGs in ${config.paths.dagsDir} (data in ${config.home})`);
  await shutdownSignal(io);
  stop.abort();
  await role.done;
  await rt.runs.drain(SHUTDOWN_GRACE_MS);
  await rt.tracer.shutdown(); // the last spans go out before the process exits
  await rt.closeStore();
  io.out('Trellis scheduler stopped');
  return ExitCode.Ok;
};

export const schedulerCommand: Command = {
  name: 'scheduler',
  summary: 'run the cron scheduler and queue processor',
  usage: USAGE,
  run,
};
