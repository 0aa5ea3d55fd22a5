import { Counter, Histogram, type Registry } from 'prom-client';
import { RunTransitions, runKeyOf, type RunFacts } from './run-transitions.js';

/** The `status` label of the run counters (spec: `svc_dag_runs_total`). */
type RunOutcome = 'success' | 'error' | 'cancelled';

/** Statuses 4 (finished) and 6 (partial success) are `success`, 2 `error`, 3 `cancelled`. */
const OUTCOME_OF: Readonly<Record<number, RunOutcome>> = {
  4: 'success',
  6: 'success',
  2: 'error',
  3: 'cancelled',
};

/** Run durations: from a quarter second to a day. */
const DURATION_BUCKETS = [
  0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400,
];

/** Queue waits: from 10 ms (a free queue) to a day. */
const QUEUE_WAIT_BUCKETS = [
  0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600, 1800, 3600, 7200, 21600, 86400,
];

/** The run counters and histograms, fed with every view of a run the server gets. */
export interface RunMetrics {
  /** A view of a run (engine event, coordinator update): counted once per execution. */
  observe(run: RunFacts): void;
  /** Resolves once the history read at start is counted (scrapes wait for it). */
  readonly ready: Promise<void>;
}

/** Seconds from `from` to `to` (ISO 8601), or undefined when either is missing or unparsable. */
const secondsBetween = (from: string, to: string): number | undefined => {
  const d = (Date.parse(to) - Date.parse(from)) / 1000;
  return Number.isFinite(d) ? Math.max(0, d) : undefined;
};

/** The fields of a view the metrics read, copied. */
const factsOf = (r: RunFacts): RunFacts => ({
  name: r.name,
  dagRunId: r.dagRunId,
  ...(r.root ? { root: { dagRunId: r.root.dagRunId } } : {}),
  status: r.status,
  queue: r.queue,
  queuedAt: r.queuedAt,
  startedAt: r.startedAt,
  finishedAt: r.finishedAt,
  revision: r.revision,
});

/**
 * Registers `svc_dag_runs_total{status}` (spec), `svc_dag_runs_started_total{dag}`,
 * `svc_dag_runs_finished_total{dag,status}`, `svc_dag_run_duration_seconds{dag,status}` and
 * `svc_dag_run_queue_wait_seconds{queue}`. They count what `history()` returns first (the runs in
 * the store when the server starts, so a restart does not reset them), then the runs observed
 * live; views observed while the history is read are applied after it, each run once.
 */
export const registerRunMetrics = (
  registry: Registry,
  history: (() => Promise<Iterable<RunFacts>>) | undefined,
  warn: (message: string) => void,
): RunMetrics => {
  const runsTotal = new Counter({
    name: 'svc_dag_runs_total',
    help: 'DAG runs finished, by outcome (success, error, cancelled), counted from the run history.',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  // Every outcome is present from the first scrape, so rate() sees the series start at 0.
  for (const status of ['success', 'error', 'cancelled'] as const) runsTotal.inc({ status }, 0);
  const started = new Counter({
    name: 'svc_dag_runs_started_total',
    help: 'DAG runs that started executing, by DAG.',
    labelNames: ['dag'] as const,
    registers: [registry],
  });
  const finished = new Counter({
    name: 'svc_dag_runs_finished_total',
    help: 'DAG runs that finished after starting, by DAG and outcome (success, error, cancelled).',
    labelNames: ['dag', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'svc_dag_run_duration_seconds',
    help: 'Time from a run starting to its final status, by DAG and outcome.',
    labelNames: ['dag', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const queueWait = new Histogram({
    name: 'svc_dag_run_queue_wait_seconds',
    help: 'Time a run waited in its queue before it started, by queue.',
    labelNames: ['queue'] as const,
    buckets: QUEUE_WAIT_BUCKETS,
    registers: [registry],
  });

  const transitions = new RunTransitions({
    started: (run) => {
      started.inc({ dag: run.name });
      const wait = run.queuedAt === '' ? undefined : secondsBetween(run.queuedAt, run.startedAt);
      if (wait !== undefined) queueWait.observe({ queue: run.queue || run.name }, wait);
    },
    finished: (run) => {
      const status = OUTCOME_OF[run.status];
      if (status === undefined) return;
      runsTotal.inc({ status });
      finished.inc({ dag: run.name, status });
      const took = secondsBetween(run.startedAt, run.finishedAt);
      if (took !== undefined) duration.observe({ dag: run.name, status }, took);
    },
  });

  let pending: RunFacts[] | undefined = [];
  const ready = (async () => {
    try {
      const past = history ? await history() : [];
      // Only the runs also seen live meanwhile need remembering against a second count.
      const seenLive = new Set((pending ?? []).map(runKeyOf));
      for (const run of past) transitions.observePast(run, seenLive.has(runKeyOf(run)));
    } catch (e) {
      warn(`the run metrics start from 0: reading the run history failed: ${(e as Error).message}`);
    }
    for (const run of pending ?? []) transitions.observe(run);
    pending = undefined;
  })();
  return {
    ready,
    observe: (run) => {
      // A copy: the engine keeps changing its record after the event.
      if (pending) pending.push(factsOf(run));
      else transitions.observe(run);
    },
  };
};
