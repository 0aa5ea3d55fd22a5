import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { expectError } from '../support/expect-error.js';
import { useRunRoutes } from '../support/run-routes-fixture.js';

/** Changing runs: stop, retry, dequeue and step status. */
const t = useRunRoutes();
const { api, stepRunning, startAndFinish } = t;

describe('changing runs', () => {
  it('stops a running run (200, then cancelled); 400 not_running afterwards; 404 unknown', async () => {
    t.h.dag('slow', 'steps:\n  - {name: wait, command: "sleep 30"}\n');
    const running = stepRunning('wait');
    await api().post('/api/v2/dags/slow/start').send({ dagRunId: 'x1' });
    await running;
    const res = await api().post('/api/v2/dag-runs/slow/x1/stop');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect((await t.h.finished('slow', 'x1')).status).toBe(RunStatus.Cancelled);
    expectError(await api().post('/api/v2/dag-runs/slow/x1/stop'), 400, 'not_running');
    expectError(await api().post('/api/v2/dag-runs/slow/nope/stop'), 404, 'not_found');
  });

  it('retries as a new run; 400 already_running while the DAG runs; 409 for a taken id; 404 unknown', async () => {
    t.h.dag('flaky', 'steps:\n  - {name: a, command: "true"}\n');
    await startAndFinish('flaky', { dagRunId: 'f1' });
    const res = await api().post('/api/v2/dag-runs/flaky/f1/retry').send({ dagRunId: 'f2' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ dagRunId: 'f2' });
    expect((await t.h.finished('flaky', 'f2')).status).toBe(RunStatus.Succeeded);
    expectError(
      await api().post('/api/v2/dag-runs/flaky/f1/retry').send({ dagRunId: 'f2' }),
      409,
      'already_exists',
    );
    expectError(await api().post('/api/v2/dag-runs/flaky/nope/retry').send({}), 404, 'not_found');
  });

  it('answers 400 already_running for a retry while another run of the DAG runs', async () => {
    t.h.dag('slow', 'maxActiveRuns: -1\nsteps:\n  - {name: wait, command: "sleep 30"}\n');
    const r1 = stepRunning('wait');
    await api().post('/api/v2/dags/slow/start').send({ dagRunId: 'o1' });
    await r1;
    await api().post('/api/v2/dag-runs/slow/o1/stop');
    await t.h.finished('slow', 'o1');
    const r2 = stepRunning('wait');
    await api().post('/api/v2/dags/slow/start').send({ dagRunId: 'o2' });
    await r2;
    expectError(
      await api().post('/api/v2/dag-runs/slow/o1/retry').send({}),
      400,
      'already_running',
    );
    await api().post('/api/v2/dag-runs/slow/o2/stop');
    await t.h.finished('slow', 'o2');
  });

  it('dequeue answers 404 for a run that is not queued', async () => {
    t.h.dag('hello', 'steps:\n  - "true"\n');
    await startAndFinish('hello', { dagRunId: 'd1' });
    expectError(await api().get('/api/v2/dag-runs/hello/d1/dequeue'), 404, 'not_found');
  });

  it('sets a step status 0-5, refusing other values and unknown steps', async () => {
    t.h.dag('two', 'steps:\n  - {name: a, command: "false"}\n  - {name: b, command: "true"}\n');
    await startAndFinish('two', { dagRunId: 't1' });
    expect(
      (await api().patch('/api/v2/dag-runs/two/t1/steps/a/status').send({ status: 4 })).status,
    ).toBe(200);
    expect((await t.h.store.getRun({ name: 'two', dagRunId: 't1' })).nodes[0]?.status).toBe(4);
    expectError(
      await api().patch('/api/v2/dag-runs/two/t1/steps/a/status').send({ status: 6 }),
      400,
      'bad_request',
    );
    expectError(
      await api().patch('/api/v2/dag-runs/two/t1/steps/a/status').send({ status: 'done' }),
      400,
      'bad_request',
    );
    expectError(
      await api().patch('/api/v2/dag-runs/two/t1/steps/zz/status').send({ status: 1 }),
      404,
      'not_found',
    );
  });

  it('keeps both of two step status changes sent at once (neither overwrites the other)', async () => {
    t.h.dag('pair', 'steps:\n  - {name: a, command: "true"}\n  - {name: b, command: "true"}\n');
    await startAndFinish('pair', { dagRunId: 'p1' });
    for (const [x, y] of [
      [1, 2],
      [5, 3],
      [2, 5],
      [3, 1],
    ] as const) {
      const [ra, rb] = await Promise.all([
        api().patch('/api/v2/dag-runs/pair/p1/steps/a/status').send({ status: x }),
        api().patch('/api/v2/dag-runs/pair/p1/steps/b/status').send({ status: y }),
      ]);
      expect([ra.status, rb.status]).toEqual([200, 200]);
      const run = await t.h.store.getRun({ name: 'pair', dagRunId: 'p1' });
      expect(run.nodes.map((n) => n.status)).toEqual([x, y]);
    }
  });
});
