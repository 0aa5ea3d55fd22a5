import { hostname } from 'node:os';
import { ConfigError, systemClock, type Config, type loadConfig } from '@trellis/core';
import { ExitCode, definedEnv, type CliIo } from '../io.js';
import { VERSION } from '../version.js';
import { SHUTDOWN_GRACE_MS, shutdownSignal } from '../wiring/shutdown.js';
import type { Command } from './command.js';
import { parseCommandArgs } from './common.js';
import type { FlagSpecs } from './flags.js';
import { WORKER_ADMIN_HELP, workerAdminOf } from './worker-admin.js';

const USAGE =
  'trellis worker --coordinator <host:port[,host:port...]> --labels k=v,... [--id <id>] [--concurrency N] [--redis-url <url>] [--grace-sec N] [--home <dir>] [--config <file>]';

const OPTIONS = {
  coordinator: {
    type: 'string',
    value: '<host:port[,...]>',
    description:
      'the coordinator to register with, or several comma-separated (replicated coordinators: it moves to the next when one is lost; default worker.coordinators, else coordinator.advertise, else coordinator.host:port)',
    example: 'trellis worker --coordinator 10.0.0.5:50055,10.0.0.6:50055 --labels gpu=true',
  },
  labels: {
    type: 'string',
    short: 'l',
    value: '<k=v,...>',
    description: 'labels that decide which runs this worker gets (workerSelector of a DAG)',
    example: 'trellis worker --labels region=eu,gpu=true',
  },
  id: {
    type: 'string',
    value: '<id>',
    description: 'the worker id (default hostname@pid)',
    example: 'trellis worker --labels gpu=true --id gpu-1',
  },
  concurrency: {
    type: 'string',
    short: 'c',
    value: '<n>',
    description: 'runs executed at once, at most (default 4)',
    example: 'trellis worker --labels gpu=true --concurrency 8',
  },
  'redis-url': {
    type: 'string',
    value: '<url>',
    description: 'the Redis of the fleet (default $SVC_REDIS_URL, redis.url)',
    example: 'trellis worker --labels gpu=true --redis-url redis://127.0.0.1:6379',
  },
  'grace-sec': {
    type: 'string',
    value: '<n>',
    description:
      'on SIGTERM, seconds running runs get to finish before they are stopped (default 30)',
    example: 'trellis worker --labels gpu=true --grace-sec 120',
  },
} as const satisfies FlagSpecs;

/**
 * `trellis worker`: executes runs the coordinator dispatches to its labels (docs/architecture.md
 * section 3). Needs Redis (`SVC_REDIS_URL`) and a coordinator. SIGTERM: no new runs, running ones
 * finish within the grace period, then they are stopped.
 */
const unexpectedArgument = (word: string | undefined, io: CliIo): ExitCode => {
  io.err(`trellis worker: unexpected argument ${JSON.stringify(word)}\nusage: ${USAGE}`);
  return ExitCode.Usage;
};

const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const admin = workerAdminOf(args);
  if (admin) return admin.run(args.slice(1), io);
  const { values, positionals } = parseCommandArgs(args, OPTIONS);
  if (positionals.length > 0) return unexpectedArgument(positionals[0], io);
  const { loadConfig } = await import('../wiring/config-loader.js'); // zod: not for --help
  const settings = workerSettings(values, io, loadConfig);
  if (typeof settings === 'number') return settings;
  const { config, redisUrl, address, graceSec } = settings;
  // gRPC, BullMQ and the executors are loaded only by the command that needs them; and only the
  // worker's entries of coordinator, dispatch and store: not the coordinator server, the store
  // or the API's schemas (tests/e2e/worker-modules.test.ts lists what a worker loads)
  const [
    { CoordinatorClient },
    { WorkerAgent, createRedis, outboxDirOf },
    executors,
    { workerTlsOf },
    { logRedisOutages },
    { RunTracer },
    { currentOwner },
  ] = await Promise.all([
    import('@trellis/coordinator/client'),
    import('@trellis/dispatch/worker'),
    import('@trellis/executors'),
    import('../wiring/fleet-tls.js'),
    import('../wiring/redis-log.js'),
    import('@trellis/telemetry'),
    import('@trellis/store/process-owner'),
  ]);
  // runs of DAGs with `otel.enabled` are traced where they execute (the SDK loads only then)
  const tracer = new RunTracer({ serviceVersion: VERSION, warn: (m) => io.err(`warning: ${m}`) });
  const { ShellCommandRunner, SpawnerProcessRunner, createExecutorSet } = executors;
  const id = config.worker.id || `${hostname()}@${process.pid}`;
  const tls = workerTlsOf(config);
  const owner = currentOwner(id);
  const redis = createRedis(redisUrl);
  logRedisOutages(redis, redisUrl, (l) => io.err(`worker ${id}: ${l}`)); // one line per outage
  // step processes start in a spawner process: a fork never stalls heartbeats and log delivery
  const processes = new SpawnerProcessRunner();
  const executorSet = createExecutorSet({
    containerAuthConfig: io.env.CONTAINER_AUTH_CONFIG ?? io.env.DOCKER_AUTH_CONFIG,
    processes,
  });
  const agent = new WorkerAgent({
    id,
    labels: config.worker.labels,
    concurrency: config.worker.concurrency,
    // keyed by the configured id (or host): a restarted worker finds what it had not delivered
    outboxDir: outboxDirOf(config.home, config.worker.id || hostname()),
    outboxMaxBytes: config.worker.outboxMaxBytes,
    client: new CoordinatorClient({
      address,
      clock: systemClock,
      token: config.worker.token,
      workerId: id,
      ...(tls ? { tls } : {}),
    }),
    redis,
    clock: systemClock,
    executors: executorSet.executors,
    runHooks: [tracer, ...executorSet.runHooks],
    commands: new ShellCommandRunner(processes),
    systemEnv: definedEnv(io.env),
    defaultShell: config.defaultShell || io.env.SHELL || 'sh',
    owner: { pid: owner.pid, host: owner.host, processStart: owner.processStart },
    log: (line) => io.err(`worker ${id}: ${line}`),
    version: VERSION,
  });
  const signalled = shutdownSignal(io); // before "started": a SIGTERM sent on seeing it is handled
  agent.start();
  io.out(
    `Trellis worker "${id}" started (coordinator ${address}, labels ${JSON.stringify(config.worker.labels)}, concurrency ${config.worker.concurrency})`,
  );
  await Promise.race([
    signalled,
    agent.drainRequested.then(() =>
      io.err(`worker ${id}: drained by an operator: letting its runs finish, then exiting`),
    ),
  ]);
  await agent.stop(graceSec === undefined ? SHUTDOWN_GRACE_MS : graceSec * 1000);
  redis.disconnect();
  await tracer.shutdown(); // the last spans go out before the process exits
  io.out(`Trellis worker "${id}" stopped`);
  return ExitCode.Ok;
};

interface WorkerSettings {
  readonly config: Config;
  readonly redisUrl: string;
  readonly address: string;
  readonly graceSec: number | undefined;
}

/** The worker's config, Redis and coordinator address, checked; a usage error is said and returned. */
const workerSettings = (
  values: ReturnType<typeof parseCommandArgs<typeof OPTIONS>>['values'],
  io: CliIo,
  load: typeof loadConfig,
): WorkerSettings | ExitCode => {
  const graceSec = values['grace-sec'] === undefined ? undefined : Number(values['grace-sec']);
  if (graceSec !== undefined && !(Number.isFinite(graceSec) && graceSec >= 0)) {
    io.err(
      `trellis worker: invalid --grace-sec ${JSON.stringify(values['grace-sec'])}: use a number of seconds, 0 or more`,
    );
    return ExitCode.Usage;
  }
  let config;
  try {
    ({ config } = load({
      env: io.env,
      cwd: io.cwd,
      argv: {
        home: values.home,
        config: values.config,
        labels: values.labels,
        workerId: values.id,
        concurrency: values.concurrency,
        redisUrl: values['redis-url'],
      },
    }));
  } catch (e) {
    if (e instanceof ConfigError) {
      io.err(`trellis worker: ${e.message}`);
      return ExitCode.Usage;
    }
    throw e;
  }
  const redisUrl = config.redis?.url;
  if (redisUrl === undefined) {
    io.err(
      'trellis worker: no Redis configured: set SVC_REDIS_URL (or --redis-url, or redis.url in config.yaml) to the Redis the coordinator uses',
    );
    return ExitCode.Usage;
  }
  const c = config.coordinator;
  const listed = config.worker.coordinators.join(',');
  const address = values.coordinator ?? (listed || c.advertise || `${c.host}:${c.port}`);
  const bad = invalidAddress(address);
  if (bad !== undefined) {
    io.err(
      `trellis worker: invalid --coordinator ${JSON.stringify(bad)}: use host:port, e.g. 127.0.0.1:50055 (several: comma-separated)`,
    );
    return ExitCode.Usage;
  }
  return { config, redisUrl, address, graceSec };
};

/** The first entry of a comma-separated address list that is not `host:port` (or the list, if empty). */
const invalidAddress = (list: string): string | undefined => {
  const parts = list.split(',').map((a) => a.trim());
  if (parts.every((a) => a === '')) return list;
  return parts.find(
    (a) => a !== '' && !/^[^\s:]+:\d{1,5}$/.test(a) && !/^\[[^\]]+\]:\d{1,5}$/.test(a),
  );
};

export const workerCommand: Command = {
  name: 'worker',
  summary: 'run DAG runs dispatched by a coordinator',
  usage: USAGE,
  details: `Operators manage a running worker through the API of its coordinator:\n${WORKER_ADMIN_HELP}`,
  options: OPTIONS,
  run,
};
