import type { RunRef } from '@trellis/spec';
import { FakeClock } from '@trellis/testkit';
import { MemoryFleet } from '../../src/fleet/memory-fleet.js';
import { SharedFleet } from '../../src/fleet/shared-fleet.js';
import { LostWorkers } from '../../src/server/lost-workers.js';
import { rooms } from './coordinator-rooms.js';
import { MemoryCoordinatorStore } from './memory-coordinator-store.js';

/** One coordinator's rooms, sharing a store, a clock and a {@link MemoryFleet} with others. */
const side = (name: string, store: MemoryCoordinatorStore, clock: FakeClock, port: MemoryFleet) => {
  const { ctx, tracker, reconcile, workers, updates, warnings, claims } = rooms(store, clock);
  const lost = new LostWorkers(ctx);
  const fleet = new SharedFleet(ctx, port, {
    advertise: () => `${name}:50055`,
    addQueue: (q) => workers.addQueue(q),
    setState: (id, state) => void workers.setState(id, state),
  });
  workers.fleet = fleet;
  lost.fleet = fleet;
  let capacityChanges = 0;
  ctx.capacity.on(() => capacityChanges++);
  /** A heartbeat of `workerId` listing `runs`, and its store work done. */
  const beat = async (
    workerId: string,
    o: { labels?: Record<string, string>; capacity?: number; runs?: RunRef[] } = {},
  ) => {
    const reply = workers.heartbeat({
      workerId,
      labels: o.labels ?? { pool: 'gpu' },
      capacity: o.capacity ?? 1,
      runningTasks: (o.runs ?? []).map((r) => ({ run: r, root: r, parent: null, startedAt: '' })),
      incarnation: 'i1',
      accepting: true,
    });
    await reconcile.settled();
    return reply;
  };
  return {
    ctx,
    tracker,
    workers,
    lost,
    fleet,
    updates,
    warnings,
    beat,
    claims,
    capacityChanges: () => capacityChanges,
  };
};

/** Coordinators `a` and `b` on one store and one shared worker view, with one clock. */
export const twoCoordinators = () => {
  const clock = new FakeClock('2026-03-01T10:00:00Z');
  const store = new MemoryCoordinatorStore();
  const port = new MemoryFleet(() => clock.now().getTime());
  const a = side('coord-a', store, clock, port);
  const b = side('coord-b', store, clock, port);
  /** Both publish, then both read. */
  const sync = async (): Promise<void> => {
    await a.fleet.sync();
    await b.fleet.sync();
    await a.fleet.sync();
  };
  return { clock, store, port, a, b, sync };
};
