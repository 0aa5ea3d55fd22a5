import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { beat, syncBoth, useRedisCoordinators } from '../../test/support/redis-coordinators.js';

/** Two coordinators sharing their workers through one private redis-server (the helper's). */
const t = useRedisCoordinators('trellis-shared-fleet-');

const ref = { name: 'job', dagRunId: 'r1' };
const task = [{ run: ref, root: ref, parent: null, startedAt: '' }];
const running = (workerId: string): DagRunRecord => ({
  name: 'job',
  dagRunId: 'r1',
  root: ref,
  status: RunStatus.Running,
  createdAt: t.clock.now().toISOString(),
  queuedAt: '',
  startedAt: t.clock.now().toISOString(),
  finishedAt: '',
  log: t.store.runLogPath(ref),
  params: [],
  nodes: [],
  preconditions: [],
  error: '',
  owner: { pid: 1, host: 'h', processStart: '', workerId },
  queue: 'job',
  revision: 1,
});

describe('replicated coordinators share their workers through Redis', { timeout: 30_000 }, () => {
  it('reports availability and lists a worker connected only to the other coordinator', async () => {
    await beat(t.b, t.toB, 'gpu-1');
    expect(t.a.availability({ pool: 'gpu-1' })).toBe('no healthy worker has labels pool=gpu-1');
    await syncBoth(t);
    expect(t.a.availability({ pool: 'gpu-1' })).toBeNull();
    expect(t.a.workers().map((w) => [w.id, w.health])).toEqual([['gpu-1', 'healthy']]);
  });

  it('counts the runs the other coordinator dispatched and no worker claimed yet against the free slots', async () => {
    const selector = { pool: 'last-1' };
    await beat(t.b, t.toB, 'last-1'); // 2 slots, connected to b only
    await syncBoth(t);
    expect(t.b.availability(selector)).toBeNull();
    const dispatched = (dagRunId: string): DagRunRecord => ({
      ...running(''),
      dagRunId,
      root: { name: 'job', dagRunId },
    });
    // a hands out both slots of b's worker; no worker took either yet
    t.a.expect(dispatched('p1'), selector);
    t.a.expect(dispatched('p2'), selector);
    expect(t.a.availability(selector)).toBe('every worker matching pool=last-1 is busy');
    await syncBoth(t);
    expect(t.b.availability(selector)).toBe('every worker matching pool=last-1 is busy');
    // Gone from a's queue (as a failed enqueue leaves them): b counts the slots free again.
    t.a.unexpect({ name: 'job', dagRunId: 'p1' });
    t.a.unexpect({ name: 'job', dagRunId: 'p2' });
    await syncBoth(t);
    expect(t.b.availability(selector)).toBeNull();
  });

  it('keeps the runs of a worker that moved from one to the other, and loses them once no one hears it', async () => {
    await t.store.createRun(running('mover'), { dag: { name: 'job', steps: [] }, localDags: [] });
    await beat(t.a, t.toA, 'mover', task); // a adopts the run from the store
    // It moves to b and beats there for longer than the lost-worker threshold.
    for (let i = 0; i < 16; i++) {
      await t.clock.advanceBy(1_000);
      await beat(t.b, t.toB, 'mover', task);
      await syncBoth(t);
    }
    await t.a.sweepLostWorkers();
    await t.b.sweepLostWorkers();
    expect((await t.store.getRun(ref)).status).toBe(RunStatus.Running);
    expect(t.a.workers().find((w) => w.id === 'mover')?.health).toBe('healthy');
    // Heard by no one for the threshold: lost, its run failed naming it.
    await t.clock.advanceBy(16_000);
    await syncBoth(t);
    await t.a.sweepLostWorkers();
    await t.b.sweepLostWorkers();
    const lost = await t.store.getRun(ref);
    expect(lost.status).toBe(RunStatus.Failed);
    expect(lost.error).toMatch(/^worker "mover" was lost: no heartbeat since/);
  });
});
