import { register as globalRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FakeClock, parseExposition, sampleValue } from '@trellis/testkit';
import { createMetrics, type MetricSources, type RunFacts } from './create-metrics.js';

const START = Date.parse('2026-01-02T02:00:00.000Z');
/** An instant `s` seconds after a fixed start, ISO 8601. */
const at = (s: number): string => new Date(START + s * 1000).toISOString();

/** A view of a run of DAG x, started at `at(0)`, final at `at(10)`. */
const runFacts = (over: Partial<RunFacts> = {}): RunFacts => ({
  name: 'x',
  dagRunId: 'r1',
  status: 4,
  queue: '',
  queuedAt: '',
  startedAt: at(0),
  finishedAt: at(10),
  revision: 1,
  ...over,
});

const setup = (sources: Partial<MetricSources> = {}) => {
  const clock = new FakeClock('2026-01-02T03:04:05.000Z');
  const metrics = createMetrics({
    version: '1.2.3',
    buildDate: '2026-01-01T00:00:00Z',
    clock,
    startedAt: new Date('2026-01-02T03:00:00.000Z'),
    sources: {
      runningRuns: () => 2,
      queuedRuns: () => Promise.resolve({ a: 1, b: 2 }),
      dagCount: () => 7,
      schedulerRunning: () => true,
      ...sources,
    },
  });
  const scrape = async () => parseExposition((await metrics.render()).body);
  const value = async (name: string, labels: Record<string, string> = {}) =>
    sampleValue(await scrape(), name, labels);
  return { clock, metrics, scrape, value };
};

describe('createMetrics', () => {
  it('renders the text exposition format with HELP and TYPE for every metric', async () => {
    const { metrics, scrape } = setup();
    expect((await metrics.render()).contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = await scrape();
    for (const [name, f] of families) {
      expect(f.help, `HELP of ${name}`).toBeTruthy();
      expect(f.type, `TYPE of ${name}`).toBeTruthy();
    }
    expect([...families.keys()]).toEqual(
      expect.arrayContaining([
        'svc_info',
        'svc_uptime_seconds',
        'svc_dag_runs_currently_running',
        'svc_dag_runs_queued_total',
        'svc_dag_runs_total',
        'svc_dags_total',
        'svc_scheduler_running',
        'process_cpu_user_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_eventloop_lag_seconds',
      ]),
    );
  });

  it('keeps the types of the spec and types every other svc_* metric by its name', async () => {
    const families = await setup().scrape();
    const svc = [...families].filter(([name]) => name.startsWith('svc_'));
    expect(Object.fromEntries(svc.map(([name, f]) => [name, f.type]))).toEqual({
      // the spec's (Endpoints > System), exactly: two gauges keep their counter-like names
      svc_info: 'gauge',
      svc_uptime_seconds: 'gauge',
      svc_dag_runs_currently_running: 'gauge',
      svc_dag_runs_queued_total: 'gauge',
      svc_dag_runs_total: 'counter',
      svc_dags_total: 'gauge',
      svc_scheduler_running: 'gauge',
      // beside them: _total only on counters, base units
      svc_dag_runs_queued: 'gauge',
      svc_dag_runs_started_total: 'counter',
      svc_dag_runs_finished_total: 'counter',
      svc_dag_run_duration_seconds: 'histogram',
      svc_dag_run_queue_wait_seconds: 'histogram',
      svc_coordinator_running: 'gauge',
      svc_workers: 'gauge',
      svc_worker_slots: 'gauge',
      svc_worker_busy_slots: 'gauge',
      svc_worker_state: 'gauge',
      svc_dispatch_queue_depth: 'gauge',
      svc_dispatch_latency_seconds: 'histogram',
    });
  });

  it('drops the default gauges prom-client names like counters, keeping them by type', async () => {
    const families = await setup().scrape();
    expect(families.has('nodejs_active_handles_total')).toBe(false);
    expect(families.has('nodejs_active_requests_total')).toBe(false);
    expect(families.get('nodejs_active_handles')?.type).toBe('gauge');
    expect(families.get('nodejs_version_info')?.samples[0]?.labels.version).toBe(process.version);
  });

  it('reports svc_info = 1 with version, build_date and the Node version as go_version', async () => {
    const info = (await setup().scrape()).get('svc_info');
    expect(info?.samples).toEqual([
      {
        name: 'svc_info',
        labels: {
          version: '1.2.3',
          build_date: '2026-01-01T00:00:00Z',
          go_version: `node-${process.version}`,
        },
        value: 1,
      },
    ]);
  });

  it('reads uptime from the clock at every scrape', async () => {
    const { clock, value } = setup();
    expect(await value('svc_uptime_seconds')).toBe(245);
    await clock.advanceBy(60_000);
    expect(await value('svc_uptime_seconds')).toBe(305);
  });

  it('reads the gauges from their sources at every scrape, sync or async', async () => {
    let running = 2;
    let scheduler = true;
    const { value } = setup({
      runningRuns: () => running,
      schedulerRunning: () => Promise.resolve(scheduler),
    });
    expect(await value('svc_dag_runs_currently_running')).toBe(2);
    expect(await value('svc_dag_runs_queued_total')).toBe(3);
    expect(await value('svc_dag_runs_queued', { queue: 'a' })).toBe(1);
    expect(await value('svc_dag_runs_queued', { queue: 'b' })).toBe(2);
    expect(await value('svc_dags_total')).toBe(7);
    expect(await value('svc_scheduler_running')).toBe(1);
    running = 5;
    scheduler = false;
    expect(await value('svc_dag_runs_currently_running')).toBe(5);
    expect(await value('svc_scheduler_running')).toBe(0);
  });

  it('counts finished runs by outcome from 0: 4 and 6 success, 2 error, 3 cancelled', async () => {
    const { metrics, value } = setup();
    for (const status of ['success', 'error', 'cancelled'])
      expect(await value('svc_dag_runs_total', { status })).toBe(0);
    [4, 6, 2, 3, 3, 1, 5, 0].forEach((status, i) =>
      metrics.observeRun(runFacts({ dagRunId: `r${i}`, status })),
    );
    expect(await value('svc_dag_runs_total', { status: 'success' })).toBe(2);
    expect(await value('svc_dag_runs_total', { status: 'error' })).toBe(1);
    expect(await value('svc_dag_runs_total', { status: 'cancelled' })).toBe(2);
  });

  it('keeps each instance on a private registry, never the global one', async () => {
    const a = setup();
    const b = setup();
    a.metrics.observeRun(runFacts({ status: 2 }));
    expect(await a.value('svc_dag_runs_total', { status: 'error' })).toBe(1);
    expect(await b.value('svc_dag_runs_total', { status: 'error' })).toBe(0);
    expect(globalRegistry.getSingleMetric('svc_info')).toBeUndefined();
  });

  it("shows the store's failed writes by kind as svc_store_write_errors_total, as the store counts them", async () => {
    const counts = { log: 0, record: 0 };
    const { scrape, value } = setup({ storeWriteErrors: () => counts });
    expect((await scrape()).get('svc_store_write_errors_total')?.type).toBe('counter');
    expect(await value('svc_store_write_errors_total', { kind: 'log' })).toBe(0);
    counts.log = 3;
    counts.record = 1;
    expect(await value('svc_store_write_errors_total', { kind: 'log' })).toBe(3);
    expect(await value('svc_store_write_errors_total', { kind: 'record' })).toBe(1);
  });
});

describe('createMetrics: runs by DAG', () => {
  it('counts 3 succeeded and 1 failed run of DAG x: started, finished and durations', async () => {
    const { metrics, scrape } = setup();
    for (const [i, status] of [4, 4, 6, 2].entries()) {
      const run = runFacts({ dagRunId: `x${i}`, status: 1, revision: 1 });
      metrics.observeRun(run);
      metrics.observeRun({ ...run, status, finishedAt: at(60 + i), revision: 2 });
    }
    const f = await scrape();
    expect(sampleValue(f, 'svc_dag_runs_started_total', { dag: 'x' })).toBe(4);
    expect(sampleValue(f, 'svc_dag_runs_finished_total', { dag: 'x', status: 'success' })).toBe(3);
    expect(sampleValue(f, 'svc_dag_runs_finished_total', { dag: 'x', status: 'error' })).toBe(1);
    const ok = { dag: 'x', status: 'success' };
    expect(sampleValue(f, 'svc_dag_run_duration_seconds_count', ok)).toBe(3);
    expect(sampleValue(f, 'svc_dag_run_duration_seconds_sum', ok)).toBe(60 + 61 + 62);
    expect(sampleValue(f, 'svc_dag_run_duration_seconds_bucket', { ...ok, le: '30' })).toBe(0);
    expect(sampleValue(f, 'svc_dag_run_duration_seconds_bucket', { ...ok, le: '120' })).toBe(3);
    expect(
      sampleValue(f, 'svc_dag_run_duration_seconds_count', { dag: 'x', status: 'error' }),
    ).toBe(1);
  });

  it('observes the queue wait of a run that came off a queue, by queue', async () => {
    const { metrics, value } = setup();
    metrics.observeRun(
      runFacts({ status: 1, queue: 'batch', queuedAt: at(-5), startedAt: at(0), finishedAt: '' }),
    );
    expect(await value('svc_dag_run_queue_wait_seconds_count', { queue: 'batch' })).toBe(1);
    expect(await value('svc_dag_run_queue_wait_seconds_sum', { queue: 'batch' })).toBe(5);
  });

  it('starts the counters from the history, and counts a run seen live meanwhile once', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const past = [
      runFacts({ dagRunId: 'old', status: 2, revision: 3 }),
      runFacts({ dagRunId: 'live', status: 4, revision: 5 }),
      runFacts({ dagRunId: 'queued', status: 5, startedAt: '', finishedAt: '' }),
    ];
    const { metrics, value } = setup({ history: () => gate.then(() => past) });
    // seen live while the history is read: its final view is in the history too
    metrics.observeRun(runFacts({ dagRunId: 'live', status: 1, revision: 2 }));
    metrics.observeRun(runFacts({ dagRunId: 'live', status: 4, revision: 5 }));
    metrics.observeRun(runFacts({ dagRunId: 'new', status: 4, revision: 4 }));
    release();
    expect(await value('svc_dag_runs_started_total', { dag: 'x' })).toBe(3);
    expect(await value('svc_dag_runs_finished_total', { dag: 'x', status: 'success' })).toBe(2);
    expect(await value('svc_dag_runs_finished_total', { dag: 'x', status: 'error' })).toBe(1);
    expect(await value('svc_dag_runs_total', { status: 'success' })).toBe(2);
  });

  it('starts from 0 and says so when the history cannot be read', async () => {
    const warnings: string[] = [];
    const metrics = createMetrics({
      version: '1',
      buildDate: '',
      clock: new FakeClock('2026-01-02T03:04:05.000Z'),
      startedAt: new Date('2026-01-02T03:00:00.000Z'),
      warn: (m) => warnings.push(m),
      sources: {
        runningRuns: () => 0,
        queuedRuns: () => ({}),
        dagCount: () => 0,
        schedulerRunning: () => false,
        history: () => Promise.reject(new Error('EACCES: data/x')),
      },
    });
    const f = parseExposition((await metrics.render()).body);
    expect(sampleValue(f, 'svc_dag_runs_total', { status: 'success' })).toBe(0);
    expect(warnings).toEqual([
      'the run metrics start from 0: reading the run history failed: EACCES: data/x',
    ]);
  });
});

describe('createMetrics: the fleet', () => {
  it('says embedded mode, no workers: coordinator 0, no worker series, no error', async () => {
    const f = await setup().scrape();
    expect(sampleValue(f, 'svc_coordinator_running')).toBe(0);
    for (const health of ['healthy', 'warning', 'unhealthy'])
      expect(sampleValue(f, 'svc_workers', { health })).toBe(0);
    expect(f.get('svc_worker_slots')?.samples).toEqual([]);
    expect(sampleValue(f, 'svc_dispatch_latency_seconds_count')).toBe(0);
  });

  it('shows slots, busy slots and state by worker, and forgets a forgotten worker', async () => {
    let workers = [
      { id: 'w1', health: 'healthy', capacity: 4, busy: 3 },
      { id: 'w2', health: 'warning', capacity: 2, busy: 0 },
    ];
    const { metrics, scrape } = setup({
      fleet: { workers: () => workers, queueDepths: () => Promise.resolve({ 'gpu=true': 2 }) },
    });
    metrics.recordDispatchLatency(40);
    let f = await scrape();
    expect(sampleValue(f, 'svc_coordinator_running')).toBe(1);
    expect(sampleValue(f, 'svc_workers', { health: 'healthy' })).toBe(1);
    expect(sampleValue(f, 'svc_workers', { health: 'warning' })).toBe(1);
    expect(sampleValue(f, 'svc_worker_slots', { worker: 'w1' })).toBe(4);
    expect(sampleValue(f, 'svc_worker_busy_slots', { worker: 'w1' })).toBe(3);
    expect(sampleValue(f, 'svc_worker_state', { worker: 'w2', state: 'warning' })).toBe(1);
    expect(sampleValue(f, 'svc_worker_state', { worker: 'w2', state: 'healthy' })).toBe(0);
    expect(sampleValue(f, 'svc_dispatch_queue_depth', { queue: 'gpu=true' })).toBe(2);
    expect(sampleValue(f, 'svc_dispatch_latency_seconds_sum')).toBe(0.04);
    workers = [workers[0]!];
    f = await scrape();
    expect(f.get('svc_worker_slots')?.samples.map((s) => s.labels.worker)).toEqual(['w1']);
    expect(f.get('svc_worker_state')?.samples.every((s) => s.labels.worker === 'w1')).toBe(true);
  });
});
