import { once } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WorkerProcess } from '@trellis/dispatch/testing';
import { callApi } from '../e2e/support/start-all.js';
import { FleetFixture } from './support/fleet-fixture.js';
import { expectNothingLost, untilAllFinal } from './support/ledger.js';

/**
 * Faults of the fleet (`trellis start-all` with a private Redis, `trellis worker` processes):
 * a worker killed mid-step, a worker drained with SIGTERM, the coordinator killed and restarted,
 * Redis killed and restarted with and without its data. After each, every accepted run is final,
 * none ran twice, and a failed run's error names the cause.
 */

let fx: FleetFixture;

const base = (): string => fx.base();
const worker = (id: string, concurrency = 1): Promise<WorkerProcess> =>
  fx.startWorker(id, { labels: { role: 'fault' }, concurrency, graceSec: 60 });

/** Enqueues `n` runs of the ledger DAG (every step waits for the gate), in order. */
const enqueue = async (n: number): Promise<string[]> => {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await callApi(base(), 'POST', '/dags/ledger/enqueue', {});
    expect(r.status).toBe(200);
    ids.push(r.body.dagRunId as string);
  }
  return ids;
};

const allFinal = (ids: readonly string[]) => untilAllFinal(base, 'ledger', ids, fx.context);

beforeEach(async () => {
  fx = await FleetFixture.create();
  const spec = fx.ledger.dag({
    gated: true,
    extra: ['maxActiveRuns: 3', 'workerSelector:', '  role: fault'],
  });
  expect((await callApi(base(), 'POST', '/dags', { name: 'ledger', spec })).status).toBe(201);
}, 60_000);

afterEach(() => fx.dispose(), 60_000);

describe('faults of the fleet', { timeout: 120_000 }, () => {
  it('kill -9 of a worker mid-step: its run fails naming the worker, the others run once elsewhere', async () => {
    const doomed = await worker('doomed');
    await worker('steady');
    const ids = await enqueue(3);
    await fx.ledger.untilLines(2); // one run on each worker; the third waits for a slot
    const onDoomed = fx.ledger.lines().find((id) => doomed.output().includes(id));
    expect(onDoomed).toBeDefined();
    doomed.kill('SIGKILL');
    await once(doomed.proc, 'exit');
    fx.ledger.release();
    const runs = await allFinal(ids);
    expectNothingLost(fx.ledger, runs, /worker "doomed" was lost/);
    expect(runs.filter((r) => r.status === 2).map((r) => r.dagRunId)).toEqual([onDoomed]);
    expect(runs.filter((r) => r.status === 4)).toHaveLength(2);
  });

  it('SIGTERM drain of a worker: its running run finishes there, the queued ones go to another worker', async () => {
    const leaving = await worker('leaving');
    const ids = await enqueue(3);
    await fx.ledger.untilLines(1);
    const exited = once(leaving.proc, 'exit');
    leaving.kill('SIGTERM');
    await leaving.waitFor(/SIGTERM/);
    await worker('arriving');
    fx.ledger.release();
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    const runs = await allFinal(ids);
    expectNothingLost(fx.ledger, runs);
    expect(runs.map((r) => r.status)).toEqual([4, 4, 4]);
    expect(leaving.output()).toContain(ids[0]);
  });

  it('kill -9 of the coordinator: the worker keeps its run, the restarted coordinator finishes every run once', async () => {
    await worker('keeper');
    const ids = await enqueue(3);
    await fx.ledger.untilLines(1);
    await fx.killServer();
    fx.ledger.release();
    await fx.startServer();
    const runs = await allFinal(ids);
    expectNothingLost(fx.ledger, runs);
    expect(runs.map((r) => r.status)).toEqual([4, 4, 4]);
  });

  for (const wipe of [false, true]) {
    it(`kill -9 of Redis ${wipe ? 'losing its data' : 'keeping its data'} under running runs: every run, and the runs after it, finish once`, async () => {
      await worker('patient', 3);
      const ids = await enqueue(3);
      await fx.ledger.untilLines(3); // all three claimed and running on the worker
      await fx.redis.restart({ wipe });
      fx.ledger.release();
      ids.push(...(await enqueue(2)));
      const runs = await allFinal(ids);
      expectNothingLost(fx.ledger, runs);
      expect(runs.map((r) => r.status)).toEqual([4, 4, 4, 4, 4]);
    });
  }
});
