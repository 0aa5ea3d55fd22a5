import { Gauge, Histogram, type Registry } from 'prom-client';

/** One worker as the fleet metrics show it. */
interface WorkerSlots {
  readonly id: string;
  /** `healthy`, `warning` or `unhealthy` (from the age of its last heartbeat). */
  readonly health: string;
  /** Runs it may execute at once (its last heartbeat's capacity). */
  readonly capacity: number;
  /** Runs it executes now. */
  readonly busy: number;
}

/** What the fleet metrics read at every scrape (distributed mode). */
export interface FleetMetricSources {
  /** The workers the coordinator knows (forgotten ones are gone). */
  readonly workers: () => readonly WorkerSlots[];
  /** Jobs waiting per dispatch queue (canonical selector). */
  readonly queueDepths: () => Promise<Readonly<Record<string, number>>>;
  /** Queued runs whose workerSelector no live worker matches (absent: no such gauge). */
  readonly runsWaitingForWorker?: () => Promise<number>;
}

const HEALTHS = ['healthy', 'warning', 'unhealthy'] as const;

/**
 * The fleet metrics, registered in both modes so dashboards and alerts find every family: in
 * embedded mode (no coordinator in this process) `svc_coordinator_running` is 0, `svc_workers`
 * is 0 for every health and the per-worker and per-queue families have no series: no workers,
 * which is not an error. Returns the recorder of `svc_dispatch_latency_seconds`.
 */
export const registerFleetMetrics = (
  registry: Registry,
  fleet: FleetMetricSources | undefined,
): ((ms: number) => void) => {
  new Gauge({
    name: 'svc_coordinator_running',
    help: '1 when this process runs the coordinator (distributed mode); 0 in embedded mode, where runs execute in this process and there are no workers.',
    registers: [registry],
  }).set(fleet ? 1 : 0);
  const workers = fleet?.workers ?? (() => []);
  new Gauge({
    name: 'svc_workers',
    help: 'Workers known to the coordinator, by health (from heartbeat age); 0 in embedded mode.',
    labelNames: ['health'] as const,
    registers: [registry],
    collect() {
      const counts = new Map<string, number>(HEALTHS.map((h) => [h, 0]));
      for (const w of workers()) counts.set(w.health, (counts.get(w.health) ?? 0) + 1);
      for (const [health, n] of counts) this.set({ health }, n);
    },
  });
  registerWorkerGauges(registry, workers);
  const waiting = fleet?.runsWaitingForWorker;
  if (waiting)
    new Gauge({
      name: 'svc_runs_waiting_for_worker',
      help: 'Queued runs whose workerSelector no live worker matches.',
      registers: [registry],
      async collect() {
        this.set(await waiting());
      },
    });
  new Gauge({
    name: 'svc_dispatch_queue_depth',
    help: 'Runs waiting on each dispatch queue (named after its worker selector) for a worker.',
    labelNames: ['queue'] as const,
    registers: [registry],
    async collect() {
      this.reset(); // a queue gone from Redis leaves no stale series
      if (!fleet) return;
      for (const [queue, n] of Object.entries(await fleet.queueDepths())) this.set({ queue }, n);
    },
  });
  const latency = new Histogram({
    name: 'svc_dispatch_latency_seconds',
    help: 'Time from putting a run on its dispatch queue to a worker claiming it (distributed mode).',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return (ms) => latency.observe(ms / 1000);
};

/** `svc_worker_slots`, `svc_worker_busy_slots` and `svc_worker_state`, by worker. */
const registerWorkerGauges = (registry: Registry, workers: () => readonly WorkerSlots[]): void => {
  // Each gauge is rebuilt at every scrape: a forgotten worker's series disappear.
  new Gauge({
    name: 'svc_worker_slots',
    help: 'Runs each worker may execute at once (its capacity).',
    labelNames: ['worker'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const w of workers()) this.set({ worker: w.id }, w.capacity);
    },
  });
  new Gauge({
    name: 'svc_worker_busy_slots',
    help: 'Runs each worker executes now.',
    labelNames: ['worker'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const w of workers()) this.set({ worker: w.id }, w.busy);
    },
  });
  new Gauge({
    name: 'svc_worker_state',
    help: 'Health of each worker: 1 for its current state (healthy, warning, unhealthy), 0 for the others.',
    labelNames: ['worker', 'state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const w of workers())
        for (const state of HEALTHS) this.set({ worker: w.id, state }, w.health === state ? 1 : 0);
    },
  });
};
