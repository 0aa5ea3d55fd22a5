import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseExposition, sampleValue, type MetricFamily } from '@trellis/testkit';
import { ROOT, callApi, startAll, untilFinal, type StartAll } from './support/start-all.js';
import { expectPromtoolClean } from './support/promtool.js';

/**
 * The metrics of a real `trellis start-all` after a known set of runs (issue 18): values by DAG,
 * outcome and queue, promtool's lint, Prometheus's default path, the Grafana dashboard's queries,
 * the docs, and the counters after a restart.
 */

const ENV = (home: string) => ({
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: home,
  SVC_HOME: home,
});

let home: string;
let server: StartAll;
let base: string;

const scrape = async (url = `${base}/metrics`): Promise<Map<string, MetricFamily>> =>
  parseExposition(await (await fetch(url)).text());

/** Starts a run of DAG x that exits with `code`, and waits for its end. */
const runX = async (code: number, how: 'start' | 'enqueue' = 'start'): Promise<string> => {
  const r = await callApi(base, 'POST', `/dags/x/${how}`, { params: `{"CODE":"${code}"}` });
  expect(r.status).toBe(200);
  const id = r.body.dagRunId as string;
  await untilFinal(base, 'x', id, { context: () => server.output() });
  return id;
};

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-metrics-'));
  server = await startAll(ENV(home));
  base = `${server.url}/api/v2`;
  const spec = 'params: CODE=0\nsteps:\n  - name: s\n    command: sh -c "exit ${CODE}"\n';
  expect((await callApi(base, 'POST', '/dags', { name: 'x', spec })).status).toBe(201);
  for (const code of [0, 0, 1]) await runX(code);
  await runX(0, 'enqueue');
}, 60_000);

afterAll(async () => {
  await server.stop();
  rmSync(home, { recursive: true, force: true });
});

/** The run metrics of DAG x and the spec's counter, as one comparable record. */
const runCounts = (f: Map<string, MetricFamily>) => ({
  started: sampleValue(f, 'svc_dag_runs_started_total', { dag: 'x' }),
  succeeded: sampleValue(f, 'svc_dag_runs_finished_total', { dag: 'x', status: 'success' }),
  failed: sampleValue(f, 'svc_dag_runs_finished_total', { dag: 'x', status: 'error' }),
  durations: sampleValue(f, 'svc_dag_run_duration_seconds_count', { dag: 'x', status: 'success' }),
  failedDurations: sampleValue(f, 'svc_dag_run_duration_seconds_count', {
    dag: 'x',
    status: 'error',
  }),
  success: sampleValue(f, 'svc_dag_runs_total', { status: 'success' }),
  error: sampleValue(f, 'svc_dag_runs_total', { status: 'error' }),
});

const AFTER_FOUR_RUNS = {
  started: 4,
  succeeded: 3,
  failed: 1,
  durations: 3,
  failedDurations: 1,
  success: 3,
  error: 1,
};

describe('metrics of trellis start-all after 3 succeeded and 1 failed run of DAG x', () => {
  it('counts them by DAG and outcome, with a duration each', async () => {
    await expect.poll(async () => runCounts(await scrape())).toEqual(AFTER_FOUR_RUNS);
  });

  it('observes the queue wait of every run that went through queue x', async () => {
    const list = await callApi(base, 'GET', '/dag-runs?name=x');
    const runs = list.body.dagRuns as { queuedAt: string }[];
    expect(runs).toHaveLength(4);
    const queued = runs.filter((r) => r.queuedAt !== '').length;
    expect(queued).toBeGreaterThanOrEqual(1); // the enqueued one at least
    const f = await scrape();
    expect(sampleValue(f, 'svc_dag_run_queue_wait_seconds_count', { queue: 'x' })).toBe(queued);
    expect(sampleValue(f, 'svc_dag_runs_queued_total')).toBe(0);
  });

  it('says embedded mode: no coordinator and no workers, without an error', async () => {
    const f = await scrape();
    expect(sampleValue(f, 'svc_coordinator_running')).toBe(0);
    expect(sampleValue(f, 'svc_workers', { health: 'healthy' })).toBe(0);
    expect(f.get('svc_worker_slots')?.samples).toEqual([]);
    expect((await callApi(base, 'GET', '/workers')).status).toBe(503); // the spec's answer
  });

  it('passes promtool check metrics but for the two gauges the spec names like counters', async () => {
    expectPromtoolClean(await (await fetch(`${base}/metrics`)).text());
  });

  it('answers GET /metrics, Prometheus’s default path, with the same text/plain exposition', async () => {
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const atRoot = parseExposition(await res.text());
    expect([...atRoot.keys()].sort()).toEqual([...(await scrape()).keys()].sort());
    expect(runCounts(atRoot)).toEqual(AFTER_FOUR_RUNS);
  });

  it('exposes every metric the Grafana dashboard in deploy/ queries', async () => {
    const dashboard = readFileSync(
      join(ROOT, 'deploy', 'grafana', 'trellis-dashboard.json'),
      'utf8',
    );
    const queried = new Set(
      [...dashboard.matchAll(/\b((?:svc|process|nodejs)_[a-z0-9_]+)\b/g)].map((m) => m[1]!),
    );
    expect(queried.size).toBeGreaterThan(15);
    const f = await scrape();
    const exposed = new Set([
      ...f.keys(),
      ...[...f.values()].flatMap((x) => x.samples.map((s) => s.name)),
    ]);
    expect([...queried].filter((name) => !exposed.has(name))).toEqual([]);
  });

  it('documents every svc_* metric with its type in docs/metrics.md', async () => {
    const doc = readFileSync(join(ROOT, 'docs', 'metrics.md'), 'utf8');
    const f = await scrape();
    const missing = [...f]
      .filter(([name]) => name.startsWith('svc_'))
      .filter(
        ([name, fam]) => !new RegExp(`\\| \`${name}(\\{[^}]*\\})?\` \\| ${fam.type} \\|`).test(doc),
      )
      .map(([name]) => name);
    expect(missing).toEqual([]);
  });

  it('keeps the counters across a restart: they are rebuilt from the run history', async () => {
    expect(await server.stop()).toBe(0);
    server = await startAll(ENV(home));
    base = `${server.url}/api/v2`;
    expect(runCounts(await scrape())).toEqual(AFTER_FOUR_RUNS);
    await runX(1);
    // counted when the run's end reaches the metrics, a moment after its record reads final
    await expect
      .poll(async () => runCounts(await scrape()))
      .toMatchObject({ started: 5, failed: 2, error: 2 });
  });
});
