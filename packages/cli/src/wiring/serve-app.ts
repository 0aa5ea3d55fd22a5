import type { RequestListener } from 'node:http';
import {
  createWebAuth,
  createHealthProbe,
  createHttpApp,
  API_ROUTE_TABLES,
  type DatabaseHealth,
  type HttpDeps,
  type Metrics,
} from '@trellis/api';
import type { WorkerState } from '@trellis/coordinator';
import { systemClock, type Config, type ConfigFlags } from '@trellis/core';
import { RunReads } from '@trellis/services';
import { dataDirProblem, type FsDagStore } from '@trellis/store';
import type { PgDb } from '@trellis/store-pg';
import type { CliIo } from '../io.js';
import { VERSION } from '../version.js';
import { databaseHealth } from './leadership-metrics.js';
import { serveMetrics } from './serve-metrics.js';
import { findWebRoot } from './web-root.js';
import { dagDefinitionsOf, makeRuntime, type Runtime } from './runtime.js';
import type { LeaderFacts } from './leader-lease.js';
import { startSchedulerRole, type SchedulerStatus } from './scheduler-role.js';
import { SHUTDOWN_GRACE_MS } from './shutdown.js';
import { SHUTDOWN_SLACK_MS, stopInPhases } from './shutdown-phases.js';
import { startWebhooks } from './webhooks.js';
import { idempotentTriggers } from './idempotency.js';

/**
 * What `trellis server` / `start-all` load once they listen (serve.ts): the runtime, the
 * scheduler role, webhooks, metrics and the Express app. Loaded with `import()`, so the process
 * listens and answers `GET /health` before paying for them (issue 21: start-up).
 */
export interface ServingApp {
  /** The Express app: every request, `/health` included, once it is ready. */
  readonly app: RequestListener;
  /** The app serves: the metrics read the run history, the DAG list is read once. */
  serving(): void;
  /**
   * After the server stopped accepting: no new runs from schedules or queues, the runs finish
   * within the grace period, then webhooks, the fleet, the tracer and the store are closed.
   * `onLate` names the part still stopping when all this takes more than the grace period and
   * {@link SHUTDOWN_SLACK_MS} (shutdown-phases.ts).
   */
  stop(onLate: (part: string) => void): Promise<void>;
}

/** Wires the runtime and the app; undefined (the reason said) when the fleet cannot start. */
export const wireApp = async (
  io: CliIo,
  flags: ConfigFlags,
  config: Readonly<Config>,
  opts: { readonly withScheduler: boolean; readonly startedAt: Date },
): Promise<ServingApp | undefined> => {
  const rt = await makeRuntime(io, flags, { fleet: opts.withScheduler, spawner: true, config });
  if (!(await startFleet(rt, io))) {
    await rt.closeStore();
    return undefined;
  }
  const fleet = rt.fleet;
  const clock = systemClock;
  const { startedAt } = opts;
  const dags = dagDefinitionsOf(rt, clock);
  // Before the scheduler: every run it starts is seen by the metrics (serve-metrics.ts).
  const listening = opened();
  const warn = (m: string): void => io.err(`warning: ${m}`);
  const metrics = serveMetrics(rt, dags, () => scheduler, startedAt, warn, listening.promise);
  const stopScheduler = new AbortController();
  const scheduler = opts.withScheduler
    ? await startSchedulerRole(rt, dags, clock, (line) => io.err(line), stopScheduler.signal)
    : undefined;
  const webhooks = await startWebhooks(rt, warn);
  const webAuth = createWebAuth(config.auth, config.server.basePath);
  const deps = {
    ...httpDepsOf(rt, dags, scheduler, metrics, webAuth.auth, startedAt, io),
    idempotency: await idempotentTriggers(rt),
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
  return {
    app,
    serving: () => {
      listening.resolve();
      // Parse every DAG file once now, so the first list request is as fast as the others.
      dags
        .list({ page: 1, perPage: 1, sort: 'name', order: 'asc' })
        .catch((e: unknown) =>
          io.err(`warning: reading the DAGs folder failed: ${(e as Error).message}`),
        );
    },
    stop: (onLate) =>
      stopInPhases(
        [
          [
            "the scheduler's loops",
            async () => {
              stopScheduler.abort(); // no new runs from schedules or queues
              await scheduler?.done;
            },
          ],
          ['the runs', () => rt.runs.drain(SHUTDOWN_GRACE_MS)],
          // after the runs: their final events are journaled first
          ['the webhooks', () => webhooks.stop()],
          ['the fleet', async () => fleet?.stop()],
          ['the tracer', () => rt.tracer.shutdown()],
          // after the runs and the fleet: their last saves are made
          ['the store', () => rt.closeStore()],
        ],
        SHUTDOWN_GRACE_MS + SHUTDOWN_SLACK_MS,
        onLate,
      ),
  };
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

/** With the PostgreSQL store, `GET /health` reports its latency and pool. */
const databaseProbe = (db: PgDb | undefined): { database?: () => Promise<DatabaseHealth> } =>
  db ? { database: () => databaseHealth(db) } : {};

/** The store's part of `GET /health`: its data folder must be writable, its writes succeeding. */
const storeProblem = async (rt: Runtime): Promise<string | undefined> => {
  const problems = [await dataDirProblem(rt.config.paths.dataDir), rt.store.writeErrors.problem()];
  const found = problems.filter((p) => p !== undefined);
  return found.length === 0 ? undefined : found.join('; ');
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
      ...databaseProbe(rt.database),
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
