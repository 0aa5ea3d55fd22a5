import { describe, expect, it } from 'vitest';
import { FakeClock } from '@trellis/testkit';
import { startSchedulerRole } from './scheduler-role.js';

describe('a leader stepping down while its queue pass still runs', () => {
  it('says it is no longer the leader at once, not when the pass ends', async () => {
    const clock = new FakeClock('2026-03-01T10:00:00Z');
    const lines: string[] = [];
    let held = true;
    let endPass: () => void = () => undefined;
    let passes = 0;
    const stop = new AbortController();
    const role = startSchedulerRole(
      {
        clock,
        lease: {
          tryAcquire: () => Promise.resolve(held),
          renew: () => Promise.resolve(held),
          release: () => Promise.resolve(),
          holder: () => Promise.resolve(undefined),
        },
        leaseEveryMs: 1000,
        leaseTtlMs: 3000,
        dags: () => Promise.resolve([]),
        runs: {
          startLoaded: () => Promise.resolve({ record: { dagRunId: 'r1' }, queued: false }),
          stopAll: () => Promise.resolve([]),
          restart: () => Promise.resolve(undefined),
          listRuns: () => Promise.resolve([]),
        },
        queues: {
          // the second pass hangs (its store calls wait for connections) until the test ends it
          reconcile: () =>
            ++passes === 2 ? new Promise<void>((r) => (endPass = r)) : Promise.resolve(),
          runsEnded: () => undefined,
          releaseQueues: () => undefined,
        },
        lostRuns: {
          store: { findOrphanedRuns: () => Promise.resolve([]), saveRun: () => Promise.resolve() },
          clock,
          processes: { processStartTime: () => undefined },
        },
        retentionPass: () => Promise.resolve({ totalRuns: 0, orphanedLogFolders: 0 }),
        log: (l) => lines.push(l),
      },
      stop.signal,
    );
    for (let t = 0; t < 5_000 && passes < 2; t += 50) await clock.advanceBy(50);
    expect(role.status.running()).toBe(true);
    // another process takes the lease: the next renewal says so
    held = false;
    for (let t = 0; t < 5_000 && !lines.some((l) => l.includes('stepping down')); t += 50)
      await clock.advanceBy(50);
    expect(lines.some((l) => l.includes('another process took the scheduler lease'))).toBe(true);
    expect(role.status.running()).toBe(false);
    expect(role.status.leaseAgeMs()).toBeUndefined();
    expect(role.status.alive()).toBe(true);
    endPass();
    stop.abort();
    await clock.advanceBy(10_000);
    await role.done;
    expect(role.status.running()).toBe(false);
  });
});
