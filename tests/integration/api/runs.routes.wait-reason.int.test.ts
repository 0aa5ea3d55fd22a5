import { join } from 'node:path';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dagRoutes, runRoutes } from '@trellis/api';
import { RunDetailsSchema } from '@trellis/contract';
import { NodeStatus, systemClock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { FsDagStore } from '@trellis/store';
import { apiHarness, type ApiHarness } from '../support/api-harness.js';

/** A queued run's `waitReason` (docs/api.md, "Why a run waits"). */
let h: ApiHarness;
beforeEach(() => {
  h = apiHarness([dagRoutes, runRoutes], {
    queueConfig: [{ name: 'batch', maxConcurrency: 2 }],
    dags: (dagsDir) =>
      new FsDagStore({
        dagsDir,
        suspendDir: join(dagsDir, '..', 'suspend'),
        clock: systemClock,
        latestRun: () => Promise.resolve(undefined),
      }),
  });
});
afterEach(() => h.cleanup());
const api = () => request(h.app);

/** Resolves once a step of each of the runs `ids` is running. */
const running = (ids: readonly string[]): Promise<void> =>
  new Promise((resolve) => {
    const left = new Set(ids);
    const on = (r: DagRunRecord, _step: string, status: number): void => {
      if (status === NodeStatus.Running) left.delete(r.dagRunId);
      if (left.size === 0) {
        h.events.off('node:statusChanged', on);
        resolve();
      }
    };
    h.events.on('node:statusChanged', on);
  });

const details = async (path: string) => {
  const res = await api().get(`/api/v2/${path}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const body = res.body as { dagRunDetails?: unknown; dagRun?: unknown };
  return RunDetailsSchema.parse(body.dagRunDetails ?? body.dagRun);
};
const post = (path: string, body: object) => api().post(`/api/v2/${path}`).send(body).expect(200);
const stopAndFinish = async (name: string, ids: readonly string[]) => {
  for (const id of ids) await api().post(`/api/v2/dag-runs/${name}/${id}/stop`).expect(200);
  for (const id of ids) await h.finished(name, id);
};

describe('why a queued run waits', () => {
  it('names its place in a full queue, the capacity and the occupancy', async () => {
    h.dag('holder', 'queue: batch\nmaxActiveRuns: -1\nsteps:\n  - sleep 30\n');
    h.dag('job', 'queue: batch\nmaxActiveRuns: -1\nsteps:\n  - "true"\n');
    const busy = running(['h1', 'h2']);
    await post('dags/holder/enqueue', { dagRunId: 'h1' });
    await post('dags/holder/enqueue', { dagRunId: 'h2' });
    await busy;
    await post('dags/job/enqueue', { dagRunId: 'w1' });
    await post('dags/job/enqueue', { dagRunId: 'w2' });
    const second = await details('dag-runs/job/w2');
    expect(second.waitReason).toEqual({
      kind: 'queue',
      message: expect.stringMatching(/^position 2 of 2 in queue "batch" \(2 of 2 slots busy\)/),
      queue: 'batch',
      position: 2,
      capacity: 2,
      occupancy: 2,
      dagSuspended: false,
    });
    expect((await details('dags/job/dag-runs/w1')).waitReason).toMatchObject({ position: 1 });
    // a running run has no reason to wait
    expect((await details('dag-runs/holder/h1')).waitReason).toBeUndefined();
    await api().get('/api/v2/dag-runs/job/w1/dequeue').expect(200);
    await api().get('/api/v2/dag-runs/job/w2/dequeue').expect(200);
    await stopAndFinish('holder', ['h1', 'h2']);
  });

  it('says a one-at-a-time DAG waits for its active run, and that the DAG is suspended', async () => {
    h.dag('solo', 'steps:\n  - sleep 30\n');
    const first = running(['s1']);
    await post('dags/solo/start', { dagRunId: 's1' });
    await first;
    await post('dags/solo/start', { dagRunId: 's2' });
    const waiting = await details('dag-runs/solo/s2');
    expect(waiting.status).toBe(5);
    expect(waiting.waitReason).toMatchObject({
      kind: 'singleton',
      queue: 'solo',
      position: 1,
      capacity: 1,
      occupancy: 1,
      dagSuspended: false,
    });
    expect(waiting.waitReason?.message).toMatch(
      /DAG "solo" runs one run at a time \(maxActiveRuns: 1\) and run s1 is active/,
    );
    await api().post('/api/v2/dags/solo/suspend').send({ suspend: true }).expect(200);
    const suspended = (await details('dags/solo/dag-runs/s2')).waitReason;
    expect(suspended).toMatchObject({ kind: 'singleton', dagSuspended: true });
    expect(suspended?.message).toMatch(/The DAG is suspended: its schedule starts no runs/);
    await api().get('/api/v2/dag-runs/solo/s2/dequeue').expect(200);
    await stopAndFinish('solo', ['s1']);
  });
});
