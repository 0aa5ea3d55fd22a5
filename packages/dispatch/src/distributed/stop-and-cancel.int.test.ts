import { beforeAll, describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import type { RunService } from '@trellis/services';
import { parentOnWorker, useChildRuns } from '../../test/support/child-runs-fixture.js';
import type { CoordinatorSide } from '../../test/support/fleet.js';
import { dagYaml, useWorkerFleet } from '../../test/support/worker-fleet-fixture.js';

/**
 * Distributed mode with real processes on loopback (issue 6, Tests): a private redis-server, the
 * coordinator and dispatcher in this process over a file store, and `trellis worker` processes
 * (the built binary) with different labels (test/support/worker-fleet-fixture.ts).
 */
const fleet = useWorkerFleet();
const { worker, joined, update, newId } = fleet;
let side: CoordinatorSide;
beforeAll(() => {
  side = fleet.side;
});

describe('distributed mode with worker processes', { timeout: 60_000 }, () => {
  it('stops a run on a worker within a second of the stop request', async () => {
    await worker('stoppable', { role: 'stop' });
    await joined('stoppable');
    const id = newId();
    await side.submit(dagYaml('long', { role: 'stop' }, ['sleep 30']), id);
    await update(id, (r) => r.nodes[0]?.status === 1);
    const asked = Date.now();
    await side.store.requestStop({ name: 'long', dagRunId: id });
    const final = await side.final(id);
    expect(final.status).toBe(3);
    expect(Date.now() - asked).toBeLessThan(1_500);
  });
});

/**
 * A step's own `workerSelector` sends its child DAG run to matching workers: the parent runs in
 * this process (the coordinator's, as in start-all) with a RunService over the coordinator's store
 * and dispatcher, as the CLI wires them, or on a worker (test/support/child-runs-fixture.ts).
 */
describe('child runs sent to workers by a selector', { timeout: 60_000 }, () => {
  const kids = useChildRuns(fleet);
  const { asked, workerChildRuns, childStored, dagFile, childOf, childUpdate } = kids;
  let runs: RunService;
  beforeAll(() => {
    runs = kids.runs;
  });

  it('cancels the remote child when the parent is stopped', async () => {
    await worker('pool-c', { pool: 'c' });
    await joined('pool-c');
    dagFile(
      'calls-long',
      'steps:\n  - name: wait\n    call: child-long\n    workerSelector:\n      pool: c\n',
    );
    dagFile('child-long', 'steps:\n  - sleep 30\n');
    const childRunning = childUpdate('child-long', (r) => r.nodes[0]?.status === 1);
    const started = await runs.start({ dag: 'calls-long' });
    await childRunning;
    const asked = Date.now();
    await runs.stop(started.record);
    const final = await started.done;
    expect(final.status).toBe(RunStatus.Cancelled);
    expect(final.nodes[0]?.status).toBe(3);
    const child = await childOf(final);
    expect(child.status).toBe(RunStatus.Cancelled);
    expect(child.owner?.workerId).toBe('pool-c');
    expect(Date.now() - asked).toBeLessThan(3_000);
  });

  it('on a worker: stopping the parent cancels its child on the other worker', async () => {
    await Promise.all([worker('wa-3', { pool: 'wa3' }), worker('wb-3', { pool: 'wb3' })]);
    await Promise.all([joined('wa-3'), joined('wb-3')]);
    const id = newId();
    const childRunning = childUpdate(
      'kid',
      (r) => r.root.dagRunId === id && r.nodes[0]?.status === 1,
    );
    await side.submit(parentOnWorker('on-wa3', 'wa3', 'wb3', ['  - sleep 30']), id);
    const running = await childRunning;
    expect(running.owner?.workerId).toBe('wb-3');
    const asked = Date.now();
    await side.store.requestStop({ name: 'on-wa3', dagRunId: id });
    const final = await side.final(id);
    expect(final.status).toBe(RunStatus.Cancelled);
    expect(final.nodes[0]?.status).toBe(3);
    const child = await childOf(final);
    expect(child.status).toBe(RunStatus.Cancelled);
    expect(child.owner?.workerId).toBe('wb-3');
    expect(Date.now() - asked).toBeLessThan(5_000);
  });

  it('on a worker: a stopped parent waits at most 15 s for its child’s end to be confirmed', async () => {
    const parent = await worker('wa-8', { pool: 'wa8' });
    await joined('wa-8');
    const port = workerChildRuns();
    let cancels = 0;
    // A coordinator that takes the stop but never ends the child (it stays queued).
    side.children = {
      start: (r) => port.start(r),
      status: (ref, root) => port.status(ref, root),
      cancel: () => {
        cancels++;
        return Promise.resolve(true);
      },
    };
    try {
      const id = newId();
      const stored = childStored(id);
      await side.submit(parentOnWorker('on-wa8', 'wa8', 'nobody8', ['  - echo never']), id);
      const req = await stored;
      const stopAt = Date.now();
      await side.store.requestStop({ name: 'on-wa8', dagRunId: id });
      const final = await side.final(id);
      const waited = Date.now() - stopAt;
      expect(final.status).toBe(RunStatus.Cancelled);
      expect(final.nodes[0]?.status).toBe(3);
      expect(final.nodes[0]?.error).toBe('stopped');
      await parent.waitFor(
        /of "kid" was asked to stop; the coordinator did not confirm its end within 15 s; it may still run/,
      );
      expect(cancels).toBeGreaterThanOrEqual(1);
      expect(waited).toBeGreaterThanOrEqual(15_000);
      expect(waited).toBeLessThan(20_000);
      // The child it gave up on is still queued; end it for real.
      const ref = { name: 'kid', dagRunId: req.dagRunId };
      const root = { name: 'on-wa8', dagRunId: id };
      expect((await port.status(ref, root))?.status).toBe(RunStatus.Queued);
      expect(await port.cancel(ref, root)).toBe(true);
      expect((await asked.get(req.dagRunId))?.status).toBe(RunStatus.Cancelled);
    } finally {
      side.children = port;
    }
  }, 40_000);
});
