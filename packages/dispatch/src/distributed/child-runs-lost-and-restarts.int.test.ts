import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { parentOnWorker, useFleetWithChildRuns } from '../../test/support/child-runs-fixture.js';

/**
 * Child runs sent to workers by a selector, in distributed mode with real processes on loopback
 * (issue 6, Tests): test/support/worker-fleet-fixture.ts and child-runs-fixture.ts.
 */
const { fleet, kids } = useFleetWithChildRuns();
const { worker, joined, newId } = fleet;
const { workerChildRuns, childStored, dagFile, childOf, childUpdate } = kids;

describe('child runs sent to workers by a selector', { timeout: 60_000 }, () => {
  it('fails the parent’s step with the worker-lost error when the child’s worker dies', async () => {
    const w = await worker('pool-d', { pool: 'd' }, 1);
    await joined('pool-d');
    dagFile(
      'calls-doomed',
      'steps:\n  - name: wait\n    call: child-doomed\n    workerSelector:\n      pool: d\n',
    );
    dagFile('child-doomed', 'steps:\n  - sleep 60\n');
    const childRunning = childUpdate('child-doomed', (r) => r.nodes[0]?.status === 1);
    const started = await kids.runs.start({ dag: 'calls-doomed' });
    await childRunning;
    w.kill('SIGKILL');
    const final = await started.done;
    expect(final.status).toBe(RunStatus.Failed);
    expect(final.nodes[0]?.error).toMatch(/failed: worker "pool-d" was lost/);
    const child = await childOf(final);
    expect(child.status).toBe(RunStatus.Failed);
  });

  it('on a worker: the parent gets the final record of its child on another worker across a coordinator restart', async () => {
    await Promise.all([worker('wa-5', { pool: 'wa5' }), worker('wb-5', { pool: 'wb5' })]);
    await Promise.all([joined('wa-5'), joined('wb-5')]);
    const id = newId();
    const childRunning = childUpdate(
      'kid',
      (r) => r.root.dagRunId === id && r.nodes[0]?.status === 1,
    );
    await fleet.side.submit(
      parentOnWorker('on-wa5', 'wa5', 'wb5', [
        '  - {name: where, command: "sleep 1; echo from-wb", output: WHERE}',
      ]),
      id,
    );
    expect((await childRunning).owner?.workerId).toBe('wb-5');
    // Down longer than the child has left to run: it ends meanwhile, the parent's worker polls on.
    await fleet.side.restartCoordinator(2_500, () => {
      fleet.side.children = workerChildRuns();
    });
    const restartedAt = Date.now();
    const final = await fleet.side.final(id);
    expect(final.status).toBe(RunStatus.Succeeded);
    expect(final.owner?.workerId).toBe('wa-5');
    const child = await childOf(final);
    expect(child.status).toBe(RunStatus.Succeeded);
    expect(child.owner?.workerId).toBe('wb-5');
    expect(Date.parse(child.finishedAt)).toBeLessThan(restartedAt); // it ended in the outage
    expect(Date.parse(final.nodes[0]!.finishedAt)).toBeGreaterThanOrEqual(restartedAt);
    expect(final.nodes[0]?.status).toBe(4);
    expect(final.nodes[1]?.outputs).toEqual({ SHOWN: 'got-from-wb' });
  }, 30_000);

  it('on a worker: a child left queued by a coordinator that restarted is failed as orphaned, and so is the parent’s step', async () => {
    await worker('wa-6', { pool: 'wa6' });
    await joined('wa-6');
    const id = newId();
    const stored = childStored(id);
    await fleet.side.submit(parentOnWorker('on-wa6', 'wa6', 'nobody6', ['  - echo never']), id);
    const req = await stored; // queued: no worker has pool=nobody6
    await fleet.side.restartCoordinator(500, () => {
      fleet.side.children = workerChildRuns();
    });
    const final = await fleet.side.final(id);
    expect(final.status).toBe(RunStatus.Failed);
    expect(final.nodes[0]?.status).toBe(2);
    expect(final.nodes[0]?.error).toMatch(
      /child DAG run .* of "kid" failed: the coordinator restarted before a worker started it/,
    );
    expect(final.nodes[1]?.status).not.toBe(4);
    const child = await childOf(final);
    expect(child.dagRunId).toBe(req.dagRunId);
    expect(child.status).toBe(RunStatus.Failed);
    expect(child.error).toMatch(/the coordinator restarted before a worker started it/);
  }, 30_000);

  it('on a worker: asks again for a child whose start the coordinator answered but never stored', async () => {
    await Promise.all([worker('wa-7', { pool: 'wa7' }), worker('wb-7', { pool: 'wb7' })]);
    await Promise.all([joined('wa-7'), joined('wb-7')]);
    const port = workerChildRuns();
    let starts = 0;
    // The first answer is one of a coordinator that lost the request (GetRun then finds nothing).
    fleet.side.children = {
      start: (r) => (++starts === 1 ? Promise.resolve(true) : port.start(r)),
      status: (ref, root) => port.status(ref, root),
      cancel: (ref, root) => port.cancel(ref, root),
    };
    try {
      const id = newId();
      await fleet.side.submit(
        parentOnWorker('on-wa7', 'wa7', 'wb7', [
          '  - {name: where, command: echo again, output: WHERE}',
        ]),
        id,
      );
      const final = await fleet.side.final(id);
      expect(final.status).toBe(RunStatus.Succeeded);
      expect(starts).toBe(2);
      expect((await childOf(final)).owner?.workerId).toBe('wb-7');
      expect(final.nodes[1]?.outputs).toEqual({ SHOWN: 'got-again' });
    } finally {
      fleet.side.children = port;
    }
  });
});
