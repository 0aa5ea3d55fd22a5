import { register as globalRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '@trellis/testkit';
import { createMetrics, type MetricSources } from './create-metrics.js';

interface Family {
  help?: string;
  type?: string;
  samples: { labels: Record<string, string>; value: number }[];
}

/** A small parser of the Prometheus text exposition format (enough for these tests). */
const parseExposition = (text: string): Map<string, Family> => {
  const families = new Map<string, Family>();
  const family = (name: string): Family => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { samples: [] }));
    return f;
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      const f = family(meta[2]!);
      if (meta[1] === 'HELP') f.help = meta[3] ?? '';
      else f.type = meta[3] ?? '';
      continue;
    }
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const m of (sample[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!;
    // Histogram and summary samples belong to the family without their suffix.
    const name = sample[1]!;
    const owner = families.has(name) ? name : name.replace(/_(bucket|sum|count|created)$/, '');
    family(owner).samples.push({ labels, value: Number(sample[3]) });
  }
  return families;
};

const setup = (sources: Partial<MetricSources> = {}) => {
  const clock = new FakeClock('2026-01-02T03:04:05.000Z');
  const metrics = createMetrics({
    version: '1.2.3',
    buildDate: '2026-01-01T00:00:00Z',
    clock,
    startedAt: new Date('2026-01-02T03:00:00.000Z'),
    sources: {
      runningRuns: () => 2,
      queuedRuns: () => Promise.resolve(3),
      dagCount: () => 7,
      schedulerRunning: () => true,
      ...sources,
    },
  });
  const scrape = async () => parseExposition((await metrics.render()).body);
  const value = async (name: string, labels: Record<string, string> = {}) =>
    (await scrape())
      .get(name)
      ?.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
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

  it('types svc_dag_runs_total as a counter and the other svc_* metrics as gauges', async () => {
    const families = await setup().scrape();
    const svc = [...families].filter(([name]) => name.startsWith('svc_'));
    expect(Object.fromEntries(svc.map(([name, f]) => [name, f.type]))).toEqual({
      svc_info: 'gauge',
      svc_uptime_seconds: 'gauge',
      svc_dag_runs_currently_running: 'gauge',
      svc_dag_runs_queued_total: 'gauge',
      svc_dag_runs_total: 'counter',
      svc_dags_total: 'gauge',
      svc_scheduler_running: 'gauge',
    });
  });

  it('reports svc_info = 1 with version, build_date and the Node version as go_version', async () => {
    const info = (await setup().scrape()).get('svc_info');
    expect(info?.samples).toEqual([
      {
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
    for (const s of [4, 6, 2, 3, 3, 1, 5, 0]) metrics.recordRunFinished(s);
    expect(await value('svc_dag_runs_total', { status: 'success' })).toBe(2);
    expect(await value('svc_dag_runs_total', { status: 'error' })).toBe(1);
    expect(await value('svc_dag_runs_total', { status: 'cancelled' })).toBe(2);
  });

  it('keeps each instance on a private registry, never the global one', async () => {
    const a = setup();
    const b = setup();
    a.metrics.recordRunFinished(2);
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
