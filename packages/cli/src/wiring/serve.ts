import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  answerClientErrors,
  createWebAuth,
  createHealthProbe,
  createHttpApp,
  API_ROUTE_TABLES,
  type HttpDeps,
  type Metrics,
} from '@trellis/api';
import type { WorkerState } from '@trellis/coordinator';
import { systemClock, type ConfigFlags } from '@trellis/core';
import { IdempotentTriggers, RunReads } from '@trellis/services';
import { FsIdempotencyJournal, dataDirProblem, type FsDagStore } from '@trellis/store';
import { ExitCode, type CliIo } from '../io.js';
import { VERSION } from '../version.js';
import { createApiServer, type ApiServer } from './api-server.js';
import { serveMetrics } from './serve-metrics.js';
import { findWebRoot } from './web-root.js';
import { dagDefinitionsOf, ensureFolders, makeRuntime, type Runtime } from './runtime.js';
import type { LeaderFacts } from './leader-lease.js';
import { startSchedulerRole, type SchedulerStatus } from './scheduler-role.js';
import { SHUTDOWN_GRACE_MS, shutdownSignal } from './shutdown.js';
import { startWebhooks } from './webhooks.js';

export interface ServeOptions {
  /** `start-all`: also the scheduler role (cron, queue processor, zombie detector). */
  readonly withScheduler: boolean;
  /** Resolves when the server should shut down (SIGTERM/SIGINT by default). */
  readonly until?: Promise<unknown>;
  /** Called once the server listens, with its address. */
  readonly onListening?: (url: string) => void;
}

/**
 * `trellis server` / `trellis start-all`: the REST API over the local store, runs executing in
 * this process. Graceful shutdown: stop accepting, let runs finish for a grace period, then stop
 * them, exit 0.
 */
export const serve = async (
  io: CliIo,
  flags: ConfigFlags,
  opts: ServeOptions,
): Promise<ExitCode> => {
  const rt = await makeRuntime(io, flags, { fleet: opts.withScheduler, spawner: true });
  if (!(await startFleet(rt, io))) {
    await rt.closeStore();
    return ExitCode.Failure;
  }
  const fleet = rt.fleet;
  const { config } = rt;
  ensureFolders(config);
  const clock = systemClock;
  const startedAt = clock.now();
  const dags = dagDefinitionsOf(rt, clock);
  // Before the scheduler: every run it starts is seen by the metrics (serve-metrics.ts).
  const listening = opened();
  const warn = (m: string): void => io.err(`warning: ${m}`);
  const metrics = serveMetrics(rt, dags, () => scheduler, startedAt, warn, listening.promise);
  const stopScheduler = new AbortController();
  const scheduler = opts.withScheduler
    ? startSchedulerRole(rt, dags, clock, (line) => io.err(line), stopScheduler.signal)
    : undefined;
  const webhooks = await startWebhooks(rt, warn);
  const webAuth = createWebAuth(config.auth, config.server.basePath);
  const deps = {
    ...httpDepsOf(rt, dags, scheduler, metrics, webAuth.auth, startedAt, io),
    webhooks,
  };
  // The web UI unless `server.headless`; an unbuilt UI answers 503 saying how to build it.
  const web = config.server.headless ? undefined : findWebRoot();
  if (web && !web.built)
    io.err(`warning: the web UI is not built (${web.root}): run "pnpm build" to serve it`);
  const app = createHttpApp(deps, API_ROUTE_TABLES, {
    basePath: config.server.basePath,
    remoteNodes: config.remoteNodes,
    ...(web ? { web: { root: web.root, ...webAuth.web } } : {}),
  });
  const api = await listen(app, config, io);
  listening.resolve(); // also when it could not: the metrics' history is read, and nothing waits forever
  if (api === undefined) {
    stopScheduler.abort();
    await scheduler?.done;
    await webhooks.stop();
    await fleet?.stop();
    await rt.tracer.shutdown();
    await rt.closeStore();
    return ExitCode.Failure;
  }
  // Parse every DAG file once now, so the first list request is as fast as the others.
  dags
    .list({ page: 1, perPage: 1, sort: 'name', order: 'asc' })
    .catch((e: unknown) =>
      io.err(`warning: reading the DAGs folder failed: ${(e as Error).message}`),
    );
  const { server } = api;
  const stopReloads = reloadOnHangup(api, io);
  const addr = server.address() as AddressInfo;
  const url = `${api.scheme}://${config.server.host}:${addr.port}${config.server.basePath}`;
  io.out(
    `Trellis ${VERSION} serving ${url}/api/v2 (DAGs in ${config.paths.dagsDir}, data in ${config.home})`,
  );
  opts.onListening?.(url);

  await (opts.until ?? shutdownSignal(io));
  stopReloads();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  stopScheduler.abort(); // no new runs from schedules or queues
  await scheduler?.done;
  await rt.runs.drain(SHUTDOWN_GRACE_MS);
  await webhooks.stop(); // after the runs: their final events are journaled first
  await fleet?.stop();
  await rt.tracer.shutdown();
  await rt.closeStore(); // after the runs and the fleet: their last saves are made
  server.closeAllConnections();
  await closed;
  io.out('Trellis stopped');
  return ExitCode.Ok;
};

/** A promise and its resolve: a one-time signal. */
const opened = (): { promise: Promise<void>; resolve: () => void } => {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

/** Starts the fleet (distributed mode), if any; false (the reason said) when it cannot. */
const startFleet = async (rt: Runtime, io: CliIo): Promise<boolean> => {
  if (!rt.fleet) return true;
  try {
    await rt.fleet.start();
    return true;
  } catch (e) {
    io.err(`trellis: ${(e as Error).message}`);
    await rt.fleet.stop().catch(() => undefined);
    return false;
  }
};

const leaseAge = (ms: number | undefined): { leaseAgeMs?: number } =>
  ms === undefined ? {} : { leaseAgeMs: ms };

/** The store's part of `GET /health`: its data folder must be writable, its writes succeeding. */
const storeProblem = async (rt: Runtime): Promise<string | undefined> => {
  const problems = [await dataDirProblem(rt.config.paths.dataDir), rt.store.writeErrors.problem()];
  const found = problems.filter((p) => p !== undefined);
  return found.length === 0 ? undefined : found.join('; ');
};

/** HTTPS: SIGHUP rereads the certificate and key (api-server.ts). Returns the unsubscribe. */
const reloadOnHangup = (api: ApiServer, io: CliIo): (() => void) => {
  if (api.scheme !== 'https') return () => undefined;
  const onHup = (): void => {
    try {
      io.err(`received SIGHUP: ${api.reload()}`);
    } catch (e) {
      io.err(`warning: received SIGHUP, kept the current TLS certificate: ${(e as Error).message}`);
    }
  };
  process.on('SIGHUP', onHup);
  return () => process.off('SIGHUP', onHup);
};

/** Listens on the configured address; undefined (the reason said) when it cannot. */
const listen = async (
  app: ReturnType<typeof createHttpApp>,
  config: Runtime['config'],
  io: CliIo,
): Promise<ApiServer | undefined> => {
  let api: ApiServer;
  try {
    api = createApiServer(app, config);
  } catch (e) {
    io.err(`trellis: ${(e as Error).message}`);
    return undefined;
  }
  const { server } = api;
  server.listen(config.server.port, config.server.host);
  answerClientErrors(server);
  try {
    await Promise.race([
      once(server, 'listening'),
      once(server, 'error').then(([e]) => {
        throw e as Error;
      }),
    ]);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    io.err(
      err.code === 'EADDRINUSE'
        ? `trellis: port ${config.server.port} on ${config.server.host} is in use: choose another with --port or SVC_PORT`
        : `trellis: cannot listen on ${config.server.host}:${config.server.port}: ${err.message}`,
    );
    return undefined;
  }
  return api;
};

/**
 * What the HTTP layer gets: the services and probes of this process (`auth`: Basic/Bearer
 * credentials, plus the OIDC session cookie when auth.oidc is configured).
 */
const httpDepsOf = (
  rt: Runtime,
  dags: FsDagStore,
  scheduler: { status: SchedulerStatus; leader?: LeaderFacts } | undefined,
  metrics: Metrics,
  auth: HttpDeps['auth'],
  startedAt: Date,
  io: CliIo,
): HttpDeps => {
  const fleet = rt.fleet;
  return {
    version: VERSION,
    startedAt,
    clock: systemClock,
    dags,
    runs: rt.runs,
    reads: new RunReads(rt.store),
    events: rt.runEvents,
    finals: rt.transitions,
    idempotency: new IdempotentTriggers({
      journal: new FsIdempotencyJournal({
        dir: join(rt.config.paths.dataDir, 'idempotency'),
        clock: systemClock,
      }),
      clock: systemClock,
    }),
    auth,
    log: {
      warn: () => undefined, // refusals are answered to the caller; not worth a log line each
      error: (message, e) =>
        io.err(`error: ${message}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`),
    },
    health: createHealthProbe({
      storeProblem: () => storeProblem(rt),
      ...(scheduler ? { schedulerAlive: scheduler.status.alive } : {}),
      ...(scheduler?.leader
        ? {
            leadership: () => ({
              leader: scheduler.status.running(),
              ...leaseAge(scheduler.status.leaseAgeMs()),
            }),
          }
        : {}),
    }),
    metrics: (names) => metrics.render(names),
    metricsPrivate: !rt.config.server.metricsPublic,
    queueConfig: rt.config.queues,
    ...(fleet
      ? {
          workers: () => fleet.workers(),
          setWorkerState: (id: string, state: WorkerState) =>
            fleet.coordinator.setWorkerState(id, state),
        }
      : {}),
  };
};
