import { systemClock } from '@trellis/core';
import { ExitCode, type CliIo } from '../io.js';
import { SHUTDOWN_GRACE_MS, shutdownSignal } from '../wiring/shutdown.js';
import type { Command } from './command.js';
import { parseCommandArgs } from './common.js';
import type { FlagSpecs } from './flags.js';

const USAGE =
  'trellis coordinator [--coordinator-host <h>] [--coordinator-port <p>] [--coordinator-advertise <host:port>] [--insecure] [--redis-url <url>] [--dags <dir>] [--home <dir>] [--config <file>]';

const OPTIONS = {
  'coordinator-host': {
    type: 'string',
    value: '<host>',
    description: 'the address the gRPC coordinator listens on (default coordinator.host)',
    example: 'trellis coordinator --coordinator-host 0.0.0.0',
  },
  'coordinator-port': {
    type: 'string',
    value: '<port>',
    description: 'the gRPC port (default 50055)',
    example: 'trellis coordinator --coordinator-port 50055',
  },
  'coordinator-advertise': {
    type: 'string',
    value: '<host:port>',
    description: 'the host:port workers are told to reach (default host:port)',
    example: 'trellis coordinator --coordinator-advertise coord.internal:50055',
  },
  insecure: {
    type: 'boolean',
    description:
      'listen on a non-loopback address without TLS or worker tokens (a private network you trust)',
    example: 'trellis coordinator --coordinator-host 10.0.0.5 --insecure',
  },
  'redis-url': {
    type: 'string',
    value: '<url>',
    description: 'the Redis of the fleet (default $SVC_REDIS_URL, redis.url)',
    example: 'trellis coordinator --redis-url redis://127.0.0.1:6379',
  },
} as const satisfies FlagSpecs;

/**
 * `trellis coordinator`: the gRPC coordinator and BullMQ dispatch, with the scheduler role (cron
 * and queue processor) whose runs it dispatches, without the REST API. Needs `SVC_REDIS_URL`.
 */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals } = parseCommandArgs(args, OPTIONS);
  if (positionals.length > 0) {
    io.err(
      `trellis coordinator: unexpected argument ${JSON.stringify(positionals[0])}\nusage: ${USAGE}`,
    );
    return ExitCode.Usage;
  }
  // the wiring is loaded only by the commands that need it (CLI start-up time)
  const { dagDefinitionsOf, ensureFolders, makeRuntime } = await import('../wiring/runtime.js');
  const { startSchedulerRole } = await import('../wiring/scheduler-role.js');
  const rt = await makeRuntime(
    io,
    {
      home: values.home,
      config: values.config,
      dags: values.dags,
      coordinatorHost: values['coordinator-host'],
      coordinatorPort: values['coordinator-port'],
      coordinatorAdvertise: values['coordinator-advertise'],
      insecure: values.insecure,
      redisUrl: values['redis-url'],
    },
    { fleet: true, spawner: true },
  );
  const fleet = rt.fleet;
  if (!fleet) {
    io.err(
      'trellis coordinator: no Redis configured: set SVC_REDIS_URL (or --redis-url, or redis.url in config.yaml); workers take runs from Redis queues',
    );
    return ExitCode.Usage;
  }
  const { config } = rt;
  ensureFolders(config);
  try {
    await fleet.start();
  } catch (e) {
    io.err(`trellis coordinator: ${(e as Error).message}`);
    await fleet.stop().catch(() => undefined);
    await rt.closeStore();
    return ExitCode.Failure;
  }
  const stop = new AbortController();
  const role = await startSchedulerRole(
    rt,
    dagDefinitionsOf(rt, systemClock),
    systemClock,
    (l) => io.err(l),
    stop.signal,
  );
  io.out(
    `Trellis coordinator serving gRPC on ${config.coordinator.host}:${fleet.coordinator.port} (workers dial ${fleet.coordinator.advertise}; data in ${config.home})`,
  );
  await shutdownSignal(io);
  stop.abort();
  await role.done;
  await rt.runs.drain(SHUTDOWN_GRACE_MS);
  await rt.tracer.shutdown(); // the last spans go out before the process exits
  await fleet.stop();
  await rt.closeStore();
  io.out('Trellis coordinator stopped');
  return ExitCode.Ok;
};

export const coordinatorCommand: Command = {
  name: 'coordinator',
  summary: 'track workers over gRPC and dispatch runs to them',
  usage: USAGE,
  options: OPTIONS,
  run,
};
