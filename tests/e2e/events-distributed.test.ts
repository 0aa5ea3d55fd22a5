import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunDetailsSchema, RunEventSchema } from '@trellis/contract';
import { openSse, type SseEvent } from '../integration/support/sse-client.js';
import { startDistributed, type DistributedStartAll } from './support/distributed-start-all.js';
import { callApi } from './support/start-all.js';

/**
 * Waiting for a run and the event streams in distributed mode: `trellis start-all` with a
 * private Redis and one `trellis worker`; the run executes on the worker, its updates reach the
 * coordinator's store, and from there the long-poll, GET /events and the live log stream.
 */

let dist: DistributedStartAll;

const call = (method: string, path: string, body?: unknown) =>
  callApi(dist.base, method, path, body);
const parsed = (e: SseEvent) => RunEventSchema.parse(JSON.parse(e.data));

beforeAll(async () => {
  dist = await startDistributed('trellis-e2e-events');
  await dist.spawnWorker('ev-worker', { pool: 'ci' });
}, 60_000);

afterAll(async () => {
  await dist?.stop();
}, 60_000);

describe('events and waiting in distributed mode', { timeout: 60_000 }, () => {
  it('tells of the worker joining, answers a waiter on a remote run, and streams its log', async () => {
    const joined = await dist.events.next((e) => e.event === 'worker:joined');
    expect(parsed(joined).data).toMatchObject({ workerId: 'ev-worker', labels: { pool: 'ci' } });
    const fifo = join(dist.home, 'gate.fifo');
    execFileSync('mkfifo', [fifo]);
    const spec = `workerSelector:\n  pool: ci\nsteps:\n  - name: work\n    command: echo before; read line < ${fifo}; echo after\n`;
    expect((await call('POST', '/dags', { name: 'remote-job', spec })).status).toBe(201);
    const started = await call('POST', '/dags/remote-job/start', {});
    expect(started.status).toBe(200);
    const id = (started.body as { dagRunId: string }).dagRunId;
    await dist.events.next((e) => e.event === 'step:started' && parsed(e).dagRunId === id);

    const log = await openSse(`${dist.base}/dag-runs/remote-job/${id}/steps/work/log/stream`);
    await log.next((e) => e.event === 'log');
    const timedOut = await fetch(`${dist.base}/dag-runs/remote-job/${id}?waitFor=final&timeout=1`);
    expect(
      RunDetailsSchema.parse(((await timedOut.json()) as { dagRunDetails: unknown }).dagRunDetails)
        .status,
    ).toBe(1);
    const waiting = fetch(`${dist.base}/dag-runs/remote-job/${id}?waitFor=final&timeout=300`);
    await writeFile(fifo, 'go\n');
    const answer = (await (await waiting).json()) as { dagRunDetails: unknown };
    expect(RunDetailsSchema.parse(answer.dagRunDetails).status).toBe(4);

    await log.next((e) => e.event === 'end');
    const lines = log.events
      .filter((e) => e.event === 'log')
      .map((e) => (JSON.parse(e.data) as { content: string }).content)
      .join('\n');
    expect(lines).toBe('before\nafter');
    const finished = await dist.events.next(
      (e) => e.event === 'run:finished' && parsed(e).dagRunId === id,
    );
    const ofRun = dist.events.events.filter((e) => parsed(e).dagRunId === id).map((e) => e.event);
    // a run for workers waits in its queue until it is handed over
    expect(ofRun).toEqual([
      'run:queued',
      'queue:entered',
      'queue:left',
      'run:started',
      'step:started',
      'step:finished',
      'run:finished',
    ]);
    const ids = dist.events.events.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(parsed(finished).data).toMatchObject({ status: 4 });
  });
});
