import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Clock } from '@trellis/core';

/** Where the gauges read their values, at every scrape. */
export interface MetricSources {
  /** Runs with status running (1). */
  readonly runningRuns: () => number | Promise<number>;
  /** Runs waiting in a queue (status 5). */
  readonly queuedRuns: () => number | Promise<number>;
  /** DAG definitions stored. */
  readonly dagCount: () => number | Promise<number>;
  /** Whether the scheduler loop is running. */
  readonly schedulerRunning: () => boolean | Promise<boolean>;
  /**
   * The store's failed writes since the process started, by kind (`log`, `record`), for
   * `svc_store_write_errors_total{kind}` (beside the spec's metrics). Absent: no such metric.
   */
  readonly storeWriteErrors?: () => Readonly<Record<string, number>>;
  /** Distributed mode: the coordinator's workers and dispatch queues (absent: no such metrics). */
  readonly fleet?: FleetMetricSources;
}

/** What the fleet metrics read at every scrape (distributed mode). */
export interface FleetMetricSources {
  /** Workers known to the coordinator, by health (`healthy`, `warning`, `unhealthy`). */
  readonly workersByHealth: () => Readonly<Record<string, number>>;
  /** Jobs waiting per dispatch queue (canonical selector). */
  readonly queueDepths: () => Promise<Readonly<Record<string, number>>>;
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
}

/** The service's Prometheus metrics. */
export interface Metrics {
  /** The text exposition of every metric, for `GET /metrics` (`HttpDeps.metrics`). */
  readonly render: () => Promise<{ readonly contentType: string; readonly body: string }>;
  /**
   * Counts a finished run in `svc_dag_runs_total`: status 4 (finished) and 6 (partial success) as
   * `success`, 2 (failed) as `error`, 3 (cancelled) as `cancelled`; other statuses are ignored.
   */
  readonly recordRunFinished: (status: number) => void;
  /** Observes the time from a run's dispatch to a worker's claim (`svc_dispatch_latency_seconds`). */
  readonly recordDispatchLatency: (ms: number) => void;
}

type RunOutcome = 'success' | 'error' | 'cancelled';

const OUTCOME_OF: Readonly<Record<number, RunOutcome>> = {
  4: 'success',
  6: 'success',
  2: 'error',
  3: 'cancelled',
};

/**
 * Builds the `svc_*` metrics of the spec (Endpoints > System) on a private prom-client registry,
 * plus prom-client's default process and Node.js metrics. Names and labels are exactly the
 * spec's; `svc_dag_runs_total` counts since this process started; `go_version` of `svc_info`
 * holds the runtime version (`node-v20...`). The exposition lists them in registration order.
 */
export const createMetrics = (options: MetricsOptions): Metrics => {
  const { sources } = options;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  registerServiceGauges(registry, options);
  const runsTotal = registerRunMetrics(registry, sources);
  const fleet = sources.fleet;
  if (fleet) registerFleetGauges(registry, fleet);
  const writeErrors = sources.storeWriteErrors;
  if (writeErrors) registerStoreWriteErrors(registry, writeErrors);
  const dispatchLatency = new Histogram({
    name: 'svc_dispatch_latency_seconds',
    help: 'Time from putting a run on its dispatch queue to a worker claiming it.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: fleet ? [registry] : [],
  });

  return {
    render: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
    recordDispatchLatency: (ms) => dispatchLatency.observe(ms / 1000),
    recordRunFinished: (status) => {
      const outcome = OUTCOME_OF[status];
      if (outcome !== undefined) runsTotal.inc({ status: outcome });
    },
  };
};

/** `svc_info` and `svc_uptime_seconds`. */
const registerServiceGauges = (registry: Registry, options: MetricsOptions): void => {
  const { clock, startedAt } = options;
  new Gauge({
    name: 'svc_info',
    help: 'Service build information; the value is always 1.',
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
 * The run and DAG metrics: running and queued runs, `svc_dag_runs_total` (returned, for
 * {@link Metrics.recordRunFinished}), stored DAGs and the scheduler's state.
 */
const registerRunMetrics = (registry: Registry, sources: MetricSources): Counter<'status'> => {
  new Gauge({
    name: 'svc_dag_runs_currently_running',
    help: 'DAG runs currently running.',
    registers: [registry],
    async collect() {
      this.set(await sources.runningRuns());
    },
  });
  new Gauge({
    name: 'svc_dag_runs_queued_total',
    help: 'DAG runs currently waiting in a queue.',
    registers: [registry],
    async collect() {
      this.set(await sources.queuedRuns());
    },
  });
  const runsTotal = new Counter({
    name: 'svc_dag_runs_total',
    help: 'DAG runs finished since the service started, by outcome.',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  // Every outcome is present from the first scrape, so rate() sees the series start at 0.
  for (const status of ['success', 'error', 'cancelled'] as const) runsTotal.inc({ status }, 0);
  new Gauge({
    name: 'svc_dags_total',
    help: 'DAG definitions stored.',
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
  return runsTotal;
};

/** `svc_store_write_errors_total{kind}`: read from the store at every scrape. */
const registerStoreWriteErrors = (
  registry: Registry,
  counts: () => Readonly<Record<string, number>>,
): void => {
  new Counter({
    name: 'svc_store_write_errors_total',
    help: 'Writes the store could not do (a full disk) since the process started, by what: log, record.',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      // the store counts; the counter shows its totals
      this.reset();
      for (const [kind, n] of Object.entries(counts())) this.inc({ kind }, n);
    },
  });
};

/** Distributed mode: `svc_workers` by health and `svc_dispatch_queue_depth` per queue. */
const registerFleetGauges = (registry: Registry, fleet: FleetMetricSources): void => {
  new Gauge({
    name: 'svc_workers',
    help: 'Workers known to the coordinator, by health (from heartbeat age).',
    labelNames: ['health'] as const,
    registers: [registry],
    collect() {
      const counts = fleet.workersByHealth();
      for (const health of ['healthy', 'warning', 'unhealthy'])
        this.set({ health }, counts[health] ?? 0);
    },
  });
  new Gauge({
    name: 'svc_dispatch_queue_depth',
    help: 'Runs waiting on each dispatch queue (named after its worker selector) for a worker.',
    labelNames: ['queue'] as const,
    registers: [registry],
    async collect() {
      for (const [queue, n] of Object.entries(await fleet.queueDepths())) this.set({ queue }, n);
    },
  });
};
