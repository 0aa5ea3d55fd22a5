import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import type { FakeClock } from '@trellis/testkit';
import { record, ref, setup } from '../../test/support/coordinator-rooms.js';

describe('the stop watch of a run put on a dispatch queue', () => {
  it('runs outside the async scope of whoever dispatched it (the leader queue processor)', async () => {
    const leader = new AsyncLocalStorage<string>();
    const c = setup();
    const scopes: (string | undefined)[] = [];
    const real = c.store.saveRunIf.bind(c.store);
    c.store.saveRunIf = (rec: DagRunRecord, expect: number) => {
      scopes.push(leader.getStore());
      return real(rec, expect);
    };
    const queued = record('r1', RunStatus.Queued);
    c.store.put(queued);
    // As the queue processor does (`asLeader` in the CLI's wiring): dispatched in the scope.
    leader.run('leader of lease 1', () => c.tracker.expect(queued, {}));
    const ended = new Promise<void>((resolve) => c.ctx.capacity.on(resolve));
    c.store.requestStop(ref());
    await ended;
    expect(c.store.peek(ref())?.status).toBe(RunStatus.Cancelled);
    expect(scopes).toEqual([undefined]);
  });
});

describe('the end of a queued run while another process holds its swap lock', () => {
  it('waits on the clock between attempts after the first retry, instead of spinning', async () => {
    const c = setup();
    const clock = c.ctx.deps.clock as FakeClock;
    const queued = record('r1', RunStatus.Queued);
    c.store.put(queued);
    c.tracker.expect(queued, {});
    // The file store answers "changed" while the lock is held, the record itself unchanged.
    const real = c.store.saveRunIf.bind(c.store);
    let attempts = 0;
    c.store.saveRunIf = (rec: DagRunRecord, expect: number) =>
      ++attempts <= 4 ? Promise.resolve(false) : real(rec, expect);
    const ending = c.tracker.finishUnclaimed(ref(), RunStatus.Cancelled, 'dequeued', ref());
    await new Promise((resolve) => setImmediate(resolve));
    expect(attempts).toBe(2); // the third waits on the clock
    for (let i = 0; i < 3; i++) {
      await clock.advanceBy(50);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await expect(ending).resolves.toBe(true);
    expect(attempts).toBe(5);
  });
});
