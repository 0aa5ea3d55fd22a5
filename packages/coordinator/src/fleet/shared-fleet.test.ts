import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { record, ref } from '../../test/support/coordinator-rooms.js';
import { twoCoordinators } from '../../test/support/two-coordinators.js';
import { PENDING_CHECK_MS } from './pending-elsewhere.js';

const gpu = { pool: 'gpu' };

describe('availability across coordinators', () => {
  it('counts a worker connected to another coordinator, with its free slots', async () => {
    const { a, b, sync } = twoCoordinators();
    await b.beat('w1');
    expect(a.workers.availability(gpu)).toBe('no healthy worker has labels pool=gpu');
    await sync();
    expect(a.workers.availability(gpu)).toBeNull();
    expect(a.workers.availability({ pool: 'cpu' })).toBe('no healthy worker has labels pool=cpu');
    // Busy there (its one slot taken): busy here too.
    await b.beat('w1', { runs: [ref('r1')] });
    await sync();
    expect(a.workers.availability(gpu)).toBe('every worker matching pool=gpu is busy');
  });

  it('tells the queue processor when capacity appears on another coordinator', async () => {
    const { a, b, sync } = twoCoordinators();
    await sync();
    const before = a.capacityChanges();
    await b.beat('w1');
    await sync();
    expect(a.capacityChanges()).toBeGreaterThan(before);
  });

  it('tells it when the runs pending elsewhere of one selector fall, though those of another rose', async () => {
    const { a, b, sync } = twoCoordinators();
    await b.beat('w1');
    a.tracker.expect(record('r1', RunStatus.Queued), gpu);
    await sync();
    a.tracker.unexpect(ref('r1'), ref('r1'));
    a.tracker.expect(record('r2', RunStatus.Queued), { pool: 'cpu' });
    await a.fleet.sync();
    const before = b.capacityChanges();
    await b.fleet.sync();
    expect(b.capacityChanges()).toBeGreaterThan(before);
  });

  it('stops counting the runs pending elsewhere once Redis has been away for three syncs', async () => {
    const { a, b, port, sync } = twoCoordinators();
    await b.beat('w1');
    a.tracker.expect(record('r1', RunStatus.Queued), gpu);
    await sync();
    expect(b.workers.availability(gpu)).toBe('every worker matching pool=gpu is busy');
    port.down = true;
    await b.fleet.sync();
    await b.fleet.sync();
    expect(b.workers.availability(gpu)).toBe('every worker matching pool=gpu is busy');
    const before = b.capacityChanges();
    await b.fleet.sync();
    expect(b.workers.availability(gpu)).toBeNull();
    expect(b.capacityChanges()).toBeGreaterThan(before);
  });

  it('stops counting it once the other coordinator no longer hears it', async () => {
    const { a, b, clock, sync } = twoCoordinators();
    await b.beat('w1');
    await sync();
    await clock.advanceBy(6_000);
    await sync();
    expect(a.workers.availability(gpu)).toBe('no healthy worker has labels pool=gpu');
  });

  it("lists the other coordinators' workers in GET /workers, with their health", async () => {
    const { a, b, sync } = twoCoordinators();
    await a.beat('w-a', { labels: { pool: 'cpu' } });
    await b.beat('w-b', { runs: [ref('r1')] });
    await sync();
    const list = a.workers.list();
    expect(list.map((w) => [w.id, w.health])).toEqual([
      ['w-a', 'healthy'],
      ['w-b', 'healthy'],
    ]);
    expect(list[1]).toMatchObject({ labels: gpu, capacity: 1, state: 'active' });
    expect(list[1]!.runningTasks.map((t) => t.dagRunId)).toEqual(['r1']);
  });

  it('makes the queues another coordinator dispatches to known to its own workers', async () => {
    const { a, port, sync } = twoCoordinators();
    port.addQueue('pool=gpu');
    await sync();
    expect((await a.beat('w1')).queues).toEqual(['pool=gpu']);
  });
});

describe('the lost-worker rule across coordinators', () => {
  it('does not fail the runs of a worker that moved to another coordinator that hears it', async () => {
    const { a, b, clock, store, sync } = twoCoordinators();
    store.put(record());
    a.tracker.track(ref(), ref(), 'w1', {});
    await a.beat('w1', { runs: [ref()] });
    // It moves to b (a answered late three times), which adopts its run from the store.
    for (let i = 0; i < 16; i++) {
      await clock.advanceBy(1_000);
      await b.beat('w1', { runs: [ref()] });
      await sync();
    }
    await a.lost.sweep();
    expect(store.peek(ref())?.status).toBe(RunStatus.Running);
    expect(a.ctx.runs.all()).toEqual([]);
    expect(a.ctx.registry.get('w1')).toBeUndefined();
    expect(a.warnings).toEqual([
      'worker "w1" is heard by the coordinator at coord-b:50055, not here: 1 run(s) of it are followed there',
    ]);
    expect(b.ctx.runs.get(ref(), ref())).toMatchObject({ workerId: 'w1' });
    // a still lists it, as b hears it.
    expect(a.workers.list().map((w) => w.id)).toEqual(['w1']);
  });

  it('fails the runs of a worker whose new coordinator stopped publishing (killed)', async () => {
    const { a, b, clock, store, sync } = twoCoordinators();
    store.put(record());
    a.tracker.track(ref(), ref(), 'w1', {});
    await a.beat('w1', { runs: [ref()] });
    await clock.advanceBy(10_000);
    await b.beat('w1', { runs: [ref()] });
    await sync();
    // b dies: its snapshot lingers in Redis until it expires, but no longer changes.
    for (let i = 0; i < 6; i++) {
      await clock.advanceBy(1_000);
      await a.fleet.sync();
    }
    await a.lost.sweep();
    expect(store.peek(ref())).toMatchObject({
      status: RunStatus.Failed,
      error: expect.stringMatching(/^worker "w1" was lost/) as unknown,
    });
  });

  it('fails the runs of a worker no coordinator heard for the threshold', async () => {
    const { a, b, clock, store, sync } = twoCoordinators();
    store.put(record());
    a.tracker.track(ref(), ref(), 'w1', {});
    await a.beat('w1', { runs: [ref()] });
    await b.beat('w2', { labels: { pool: 'cpu' } });
    await sync();
    await clock.advanceBy(16_000);
    await sync();
    await a.lost.sweep();
    await b.lost.sweep();
    expect(store.peek(ref())).toMatchObject({
      status: RunStatus.Failed,
      error: expect.stringMatching(/^worker "w1" was lost/) as unknown,
    });
    expect(a.updates.map((u) => u.status)).toEqual([RunStatus.Failed]);
    expect(b.updates).toEqual([]);
  });

  it('says nothing of failed syncs that do not last (the connection still being made at start)', async () => {
    const { a, port } = twoCoordinators();
    port.down = true;
    await a.fleet.sync();
    await a.fleet.sync();
    port.down = false;
    await a.fleet.sync();
    expect(a.warnings).toEqual([]);
  });

  it('leaves no abort listener behind for each sync of its loop', async () => {
    const { a, port, clock } = twoCoordinators();
    let publishes = 0;
    const publish = port.publish.bind(port);
    port.publish = (...args) => (publishes++, publish(...args));
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      await a.fleet.start();
      while (publishes < 15) await clock.advanceBy(1_000);
      await a.fleet.stop();
      await new Promise((r) => setImmediate(r)); // a warning is emitted on a later tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
  });

  it('falls back to its own workers while Redis is away, saying so once, and back', async () => {
    const { a, b, port, clock, store, sync } = twoCoordinators();
    store.put(record());
    a.tracker.track(ref(), ref(), 'w1', {});
    await a.beat('w1', { runs: [ref()] });
    await sync();
    port.down = true;
    for (let i = 0; i < 16; i++) {
      await clock.advanceBy(1_000);
      await b.beat('w1', { runs: [ref()] }); // b hears it, but cannot tell a
      await a.fleet.sync();
    }
    expect(a.warnings).toEqual([
      'the shared worker view cannot be synced through Redis (Redis is not reachable): this coordinator sees only its own workers until it can',
    ]);
    expect(a.workers.availability({ pool: 'cpu' })).toBe('no healthy worker has labels pool=cpu');
    await a.beat('w2', { labels: { pool: 'cpu' } });
    expect(a.workers.availability({ pool: 'cpu' })).toBeNull();
    await a.lost.sweep(); // as before the shared view: its own memory of heartbeats
    expect(store.peek(ref())?.status).toBe(RunStatus.Failed);
    port.down = false;
    await a.fleet.sync();
    expect(a.warnings.at(-1)).toBe('the shared worker view is back (Redis answers again)');
  });
});

describe('a run dispatched by one coordinator and claimed through another', () => {
  const queued = () => ({
    ...record('r1', RunStatus.Running, 'local'),
    startedAt: '',
  });

  it('is forgotten by the dispatching coordinator, freeing its slot there', async () => {
    const { a, b, clock, store, sync } = twoCoordinators();
    store.put(queued());
    await b.beat('w1', { capacity: 2 });
    a.tracker.expect(queued(), gpu);
    await sync();
    expect(a.ctx.runs.pending()).toHaveLength(1);
    const claim = await b.claims.claim({
      workerId: 'w1',
      run: ref(),
      root: ref(),
      pid: 1,
      host: 'h',
      processStart: '',
    });
    expect(claim.granted).toBe(true);
    await b.claims.settled();
    // The worker's heartbeat does not list it yet (a short run may end before it does):
    // the dispatching coordinator looks it up in the store.
    await clock.advanceBy(PENDING_CHECK_MS);
    await sync();
    expect(a.ctx.runs.pending()).toEqual([]);
  });

  it('is not ended by the dispatching coordinator when a stop comes after the claim', async () => {
    const { a, b, store } = twoCoordinators();
    store.put(queued());
    await b.beat('w1');
    a.tracker.expect(queued(), gpu);
    await b.claims.claim({
      workerId: 'w1',
      run: ref(),
      root: ref(),
      pid: 1,
      host: 'h',
      processStart: '',
    });
    await b.claims.settled();
    expect(a.tracker.cancel(ref(), ref())).toBe('pending');
    expect(await a.tracker.finishUnclaimed(ref(), RunStatus.Cancelled, 'stopped', ref())).toBe(
      false,
    );
    expect(store.peek(ref())).toMatchObject({ status: RunStatus.Running, error: '' });
    expect(a.ctx.runs.all()).toEqual([]);
  });
});
