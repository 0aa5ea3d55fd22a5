import { join } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { dashboardRoutes, queueRoutes, runRoutes, type HttpDeps } from '@trellis/api';
import { DashboardResponse, WorkerHealth } from '@trellis/contract';
import { systemClock } from '@trellis/core';
import { FsDagStore } from '@trellis/store';
import { apiHarness, type ApiHarness } from '../support/api-harness.js';
import { expectError } from '../support/expect-error.js';

/** GET /dashboard and the runs list's tag and worker filters (issue 18 items 1, 2). */

let h: ApiHarness | undefined;
afterEach(() => h?.cleanup());

const harness = (workers?: HttpDeps['workers']): ApiHarness => {
  h = apiHarness([runRoutes, queueRoutes, dashboardRoutes], {
    queueConfig: [{ name: 'batch', maxConcurrency: 2 }],
    dags: (dagsDir) =>
      new FsDagStore({
        dagsDir,
        suspendDir: join(dagsDir, '..', 'suspend'),
        clock: systemClock,
        latestRun: () => Promise.resolve(undefined),
      }),
    ...(workers ? { workers } : {}),
  });
  h.dag('nightly', 'schedule: "0 2 * * *"\ntags: [etl]\nsteps:\n  - {name: s, command: "true"}\n');
  h.dag('hold', 'steps:\n  - {name: wait, command: "sleep 30"}\n');
  h.dag('quick', 'steps:\n  - {name: s, command: "true"}\n');
  return h;
};

const dashboard = async (t: ApiHarness, query = '') => {
  const res = await request(t.app).get(`/api/v2/dashboard${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return DashboardResponse.parse(res.body);
};

const start = async (t: ApiHarness, dag: string, dagRunId: string, how = 'start') => {
  const res = await request(t.app).post(`/api/v2/dags/${dag}/${how}`).send({ dagRunId });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
};

describe('GET /dashboard', () => {
  it("sums up today's runs, queue occupancy, embedded mode and the next fires in one answer", async () => {
    const t = harness();
    await start(t, 'quick', 'q1');
    await t.finished('quick', 'q1');
    await start(t, 'nightly', 'n1');
    await t.finished('nightly', 'n1');
    await start(t, 'hold', 'h1'); // answers once running
    await start(t, 'hold', 'h2', 'enqueue'); // waits: one run of hold at a time
    const d = await dashboard(t);
    expect(d.total).toBe(4);
    expect(d.counts).toEqual({
      'not started': 0,
      running: 1,
      failed: 0,
      cancelled: 0,
      finished: 2,
      queued: 1,
      'partial success': 0,
    });
    expect(d.runs.map((r) => r.dagRunId).sort()).toEqual(['h1', 'h2', 'n1', 'q1']);
    expect(d.truncated).toBe(false);
    expect(d.queues).toEqual([
      { name: 'batch', type: 'custom', maxConcurrency: 2, running: 0, queued: 0, waiting: [] },
      {
        name: 'hold',
        type: 'dag-based',
        running: 1,
        queued: 1,
        waiting: [{ name: 'hold', dagRunId: 'h2', queuedAt: expect.any(String) as string }],
      },
    ]);
    expect(d.workers).toEqual({ mode: 'embedded', list: [] });
    expect(d.nextFires).toEqual([
      { fileName: 'nightly', name: 'nightly', nextRun: expect.stringMatching(/T02:00:00/) },
    ]);
    // a range without runs: yesterday
    const today = Math.floor(Date.now() / 86_400_000) * 86_400;
    const y = await dashboard(t, `?from=${today - 86_400}&to=${today - 1}`);
    expect([y.total, y.runs, y.from, y.to]).toEqual([
      0,
      [],
      new Date((today - 86_400) * 1000).toISOString(),
      new Date(today * 1000 - 1).toISOString(),
    ]);
    await request(t.app).get('/api/v2/dag-runs/hold/h2/dequeue');
    await request(t.app).post('/api/v2/dag-runs/hold/h1/stop');
    await t.finished('hold', 'h1');
  });

  it('lists workers with state, slots busy/total and last heartbeat in distributed mode', async () => {
    const beat = new Date('2026-11-28T10:00:00.000Z');
    const task = {
      dagName: 'quick',
      dagRunId: 'r1',
      rootDagRunName: 'quick',
      rootDagRunId: 'r1',
      parentDagRunName: '',
      parentDagRunId: '',
      startedAt: beat.toISOString(),
    };
    const t = harness(() => [
      {
        id: 'w1',
        labels: {},
        health: WorkerHealth.Healthy,
        lastHeartbeat: beat,
        runningTasks: [task],
        capacity: 4,
      },
      {
        id: 'w2',
        labels: {},
        health: WorkerHealth.Unhealthy,
        lastHeartbeat: beat,
        runningTasks: [],
      },
    ]);
    const d = await dashboard(t);
    expect(d.workers).toEqual({
      mode: 'distributed',
      list: [
        {
          id: 'w1',
          health_status: 'WORKER_HEALTH_STATUS_HEALTHY',
          last_heartbeat: '2026-11-28T10:00:00Z',
          slotsBusy: 1,
          slotsTotal: 4,
        },
        {
          id: 'w2',
          health_status: 'WORKER_HEALTH_STATUS_UNHEALTHY',
          last_heartbeat: '2026-11-28T10:00:00Z',
          slotsBusy: 0,
        },
      ],
    });
  });

  it('refuses a range that ends before it starts, or is not in Unix seconds', async () => {
    const t = harness();
    expectError(
      await request(t.app).get('/api/v2/dashboard?from=200&to=100'),
      400,
      'bad_request',
      /to \(100\) is before from \(200\)/,
    );
    expectError(
      await request(t.app).get('/api/v2/dashboard?from=today'),
      400,
      'bad_request',
      /from/,
    );
  });
});

describe('GET /dag-runs: tag and worker filters beside the spec', () => {
  it('keeps runs of DAGs with the tag, and runs the worker executed', async () => {
    const t = harness();
    await start(t, 'quick', 'q1');
    await start(t, 'nightly', 'n1');
    await Promise.all([t.finished('quick', 'q1'), t.finished('nightly', 'n1')]);
    const ids = async (q: string) =>
      (
        (await request(t.app).get(`/api/v2/dag-runs?${q}`)).body as {
          dagRuns: { dagRunId: string }[];
        }
      ).dagRuns
        .map((r) => r.dagRunId)
        .sort();
    expect(await ids('tag=ETL')).toEqual(['n1']);
    expect(await ids('tag=none')).toEqual([]);
    expect(await ids('worker=local')).toEqual(['n1', 'q1']);
    expect(await ids('worker=w9')).toEqual([]);
    expect(await ids('tag=etl&worker=local&page=1&perPage=1')).toEqual(['n1']);
  });
});
