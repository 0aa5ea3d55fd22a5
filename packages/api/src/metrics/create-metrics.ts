import { AppError, ErrorCode, type Clock } from '@trellis/core';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { registerFleetMetrics, type FleetMetricSources } from './fleet-metrics.js';
import { registerRunMetrics } from './run-metrics.js';
import { registerStoreWriteErrors } from './store-write-metrics.js';
import type { RunFacts } from './run-transitions.js';

export type { RunFacts } from './run-transitions.js';

/** Where the gauges read their values, at every scrape. */
export interface MetricSources {
  /** Runs with status running (1). */
  readonly runningRuns: () => number | Promise<number>;
  /** Runs waiting in a queue (status 5), by queue name. */
  readonly queuedRuns: () =>
    Readonly<Record<string, number>> | Promise<Readonly<Record<string, number>>>;
  /** DAG definitions stored. */
  readonly dagCount: () => number | Promise<number>;
  /** Whether the scheduler loop is running. */
  readonly schedulerRunning: () => boolean | Promise<boolean>;
  /**
   * The store's failed writes since the process started, by kind (`log`, `record`), for
   * `svc_store_write_errors_total{kind}` (beside the spec's metrics). Absent: no such metric.
   */
  readonly storeWriteErrors?: () => Readonly<Record<string, number>>;
  /**
   * The runs in the store (children included), read once at start so the run counters and
   * histograms continue across restarts. Absent: they start from 0.
   */
  readonly history?: () => Promise<Iterable<RunFacts>>;
  /** Distributed mode: the coordinator's workers and dispatch queues (absent: embedded mode). */
  readonly fleet?: FleetMetricSources;
}

/** What {@link createMetrics} needs. */
export interface MetricsOptions {
  /** Service version (`svc_info{version}`). */
  readonly version: string;
  /** Build date, ISO 8601 or `''` when unknown (`svc_info{build_date}`). */
  readonly buildDate: string;
  readonly clock: Clock;
  /** When this process started serving (`svc_uptime_seconds`). */
  readonly startedAt: Date;
  readonly sources: MetricSources;
  /** Where a failure to read the run history at start is told. @default ignored */
  readonly warn?: (message: string) => void;
}

/** The service's Prometheus metrics. */
export interface Metrics {
  /**
   * The text exposition of every metric, or of `names` only, for `GET /metrics`
   * (`HttpDeps.metrics`). An unknown name throws bad_request naming it.
   */
  readonly render: (
    names?: readonly string[],
  ) => Promise<{ readonly contentType: string; readonly body: string }>;
  /**
   * A view of a run (an engine event of a local run, a coordinator update of a remote one): the
   * run counters and histograms count each execution once, however often it is seen.
   */
  readonly observeRun: (run: RunFacts) => void;
  /** Observes the time from a run's dispatch to a worker's claim (`svc_dispatch_latency_seconds`). */
  readonly recordDispatchLatency: (ms: number) => void;
  /**
   * The registry behind {@link render}: where other parts of the server register their own
   * `svc_*` metrics (the store's write errors) so that one scrape shows them all.
   */
  readonly registry: Registry;
}

/**
 * prom-client's gauges named like counters: `nodejs_active_handles{type}` and its siblings carry
 * the same numbers by type, correctly named.
 */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/**
 * Builds the metrics (docs/metrics.md lists them) on a private prom-client registry: the `svc_*`
 * metrics of the spec (Endpoints > System) with exactly its names, types and labels, the run,
 * queue and fleet metrics beside them, and prom-client's default process and Node.js metrics.
 * `go_version` of `svc_info` holds the runtime version (`node-v20...`).
 */
export const createMetrics = (options: MetricsOptions): Metrics => {
  const { sources } = options;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
  registerServiceGauges(registry, options);
  const runs = registerRunMetrics(registry, sources.history, options.warn ?? (() => undefined));
  const refresh = registerStateGauges(registry, sources);
  const recordDispatchLatency = registerFleetMetrics(registry, sources.fleet);
  if (sources.storeWriteErrors) registerStoreWriteErrors(registry, sources.storeWriteErrors);
  return {
    render: async (names) => {
      await runs.ready;
      if (names === undefined) {
        await refresh();
        return { contentType: registry.contentType, body: await registry.metrics() };
      }
      return {
        contentType: registry.contentType,
        body: await renderSome(registry, names, refresh),
      };
    },
    observeRun: (run) => runs.observe(run),
    recordDispatchLatency,
    registry,
  };
};

/** The gauges that read the queued runs (`refresh` before them). */
const QUEUED_GAUGES = ['svc_dag_runs_queued_total', 'svc_dag_runs_queued'];

/** The exposition of `names` only: each one's collect runs, no other's. */
const renderSome = async (
  registry: Registry,
  names: readonly string[],
  refresh: () => Promise<void>,
): Promise<string> => {
  const unknown = names.filter((n) => registry.getSingleMetric(n) === undefined);
  if (unknown.length > 0)
    throw new AppError(
      ErrorCode.BadRequest,
      `invalid query: no metric named ${unknown.join(', ')}: give names GET /metrics lists`,
      { name: unknown },
    );
  if (names.some((n) => QUEUED_GAUGES.includes(n))) await refresh();
  const parts = await Promise.all(names.map((n) => registry.getSingleMetricAsString(n)));
  return `${parts.join('\n')}\n`;
};

/** `svc_info` and `svc_uptime_seconds`. */
const registerServiceGauges = (registry: Registry, options: MetricsOptions): void => {
  const { clock, startedAt } = options;
  new Gauge({
    name: 'svc_info',
    help: 'Service build information; the value is always 1 (go_version holds the Node.js version).',
    labelNames: ['version', 'build_date', 'go_version'] as const,
    registers: [registry],
  }).set(
    {
      version: options.version,
      build_date: options.buildDate,
      go_version: `node-${process.version}`,
    },
    1,
  );
  new Gauge({
    name: 'svc_uptime_seconds',
    help: 'Seconds since the service started.',
    registers: [registry],
    collect() {
      this.set(Math.max(0, (clock.now().getTime() - startedAt.getTime()) / 1000));
    },
  });
};

/**
 * The gauges read from the sources (running and queued runs, DAGs, scheduler); returns what reads
 * the queued runs before each scrape.
 */
const registerStateGauges = (registry: Registry, sources: MetricSources): (() => Promise<void>) => {
  new Gauge({
    name: 'svc_dag_runs_currently_running',
    help: 'DAG runs currently running.',
    registers: [registry],
    async collect() {
      this.set(await sources.runningRuns());
    },
  });
  // One read of the queued runs per scrape feeds both queued gauges (`refresh`, before it).
  let queued: Readonly<Record<string, number>> = {};
  new Gauge({
    name: 'svc_dag_runs_queued_total',
    help: 'DAG runs currently waiting in a queue (a gauge despite its name, as the spec defines it; svc_dag_runs_queued has them by queue).',
    registers: [registry],
    collect() {
      this.set(Object.values(queued).reduce((a, b) => a + b, 0));
    },
  });
  new Gauge({
    name: 'svc_dag_runs_queued',
    help: 'DAG runs currently waiting, by queue (queues without waiting runs have no series).',
    labelNames: ['queue'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [queue, n] of Object.entries(queued)) this.set({ queue }, n);
    },
  });
  new Gauge({
    name: 'svc_dags_total',
    help: 'DAG definitions stored (a gauge despite its name, as the spec defines it).',
    registers: [registry],
    async collect() {
      this.set(await sources.dagCount());
    },
  });
  new Gauge({
    name: 'svc_scheduler_running',
    help: '1 when the scheduler is running, else 0.',
    registers: [registry],
    async collect() {
      this.set((await sources.schedulerRunning()) ? 1 : 0);
    },
  });
  return async () => {
    queued = await sources.queuedRuns();
  };
};
