import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunDetailsSchema, RunEventSchema, TriggerRunResponse } from '@trellis/contract';
import { startDistributed, type DistributedStartAll } from './support/distributed-start-all.js';
import { callApi } from './support/start-all.js';

/**
 * Why a run waits in distributed mode (issue 17 item 7): `trellis start-all` with a private Redis
 * and a worker whose labels do not match a DAG's workerSelector. Start and enqueue queue the run
 * and say no live worker matches, naming the selector and the live worker's labels; the run's
 * details and svc_runs_waiting_for_worker say so too, until a matching worker joins and runs it.
 */

let dist: DistributedStartAll;

const call = (method: string, path: string, body?: unknown) =>
  callApi(dist.base, method, path, body);

const worker = async (id: string, labels: Record<string, string>): Promise<void> => {
  const joined = dist.events.next(
    (e) =>
      e.event === 'worker:joined' && RunEventSchema.parse(JSON.parse(e.data)).data.workerId === id,
  );
  await dist.spawnWorker(id, labels);
  await joined;
};

const waitingGauge = async (): Promise<string | undefined> => {
  const res = await fetch(`${dist.base}/metrics`);
  return /^svc_runs_waiting_for_worker (\d+)$/m.exec(await res.text())?.[1];
};

beforeAll(async () => {
  dist = await startDistributed('trellis-e2e-wait');
  await worker('wr-cpu', { gpu: 'false', zone: 'a' });
}, 60_000);

afterAll(async () => {
  await dist?.stop();
}, 60_000);

describe('a run no live worker can take', { timeout: 60_000 }, () => {
  it('is queued with a reason naming the selector and the live workers, until one matches', async () => {
    const spec = 'workerSelector:\n  gpu: "true"\nsteps:\n  - name: work\n    command: echo done\n';
    expect((await call('POST', '/dags', { name: 'needs-gpu', spec })).status).toBe(201);
    const started = await call('POST', '/dags/needs-gpu/start', {});
    expect(started.status).toBe(200);
    const answer = TriggerRunResponse.parse(started.body);
    const expected = {
      kind: 'no-worker',
      selector: { gpu: 'true' },
      liveWorkerLabels: [{ gpu: 'false', zone: 'a' }],
      queue: 'needs-gpu',
      position: 1,
      occupancy: 0,
      dagSuspended: false,
    };
    expect(answer.waitReason).toMatchObject(expected);
    expect(answer.waitReason?.message).toMatch(
      /^no live worker matches workerSelector gpu=true \(live workers have labels wr-cpu \{gpu=false,zone=a\}\): start a worker with these labels/,
    );
    const details = await call('GET', `/dag-runs/needs-gpu/${answer.dagRunId}`);
    const run = RunDetailsSchema.parse(details.body.dagRunDetails);
    expect(run.status).toBe(5);
    expect(run.waitReason).toMatchObject(expected);
    const enqueued = TriggerRunResponse.parse(
      (await call('POST', '/dags/needs-gpu/enqueue', {})).body,
    );
    expect(enqueued.waitReason).toMatchObject({ kind: 'no-worker', position: 2 });
    expect(await waitingGauge()).toBe('2');

    await worker('wr-gpu', { gpu: 'true' });
    for (const id of [answer.dagRunId, enqueued.dagRunId]) {
      const done = await call('GET', `/dag-runs/needs-gpu/${id}?waitFor=final&timeout=60`);
      const final = RunDetailsSchema.parse(done.body.dagRunDetails);
      expect(final.status).toBe(4);
      expect(final.waitReason).toBeUndefined();
    }
    expect(await waitingGauge()).toBe('0');
  });
});
