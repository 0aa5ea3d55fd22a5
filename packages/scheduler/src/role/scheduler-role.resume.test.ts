import { describe, expect, it } from 'vitest';
import { parseDagFile } from '@trellis/spec';
import { FakeClock } from '@trellis/testkit';
import { startSchedulerRole } from './scheduler-role.js';

const minutely = () => {
  const file = parseDagFile('schedule: "* * * * *"\nsteps:\n  - "true"\n', { name: 'tick' });
  return { fileName: 'tick', dag: file.main.dag, suspended: false };
};

describe('a new leader whose read of the last fire fails', () => {
  it('reads it again and fires at once the minute due since, instead of resuming from nothing', async () => {
    // the predecessor fired 10:00 and died; this instance takes the lead at 10:01:02
    const clock = new FakeClock('2026-03-01T10:01:02Z');
    let failures = 2;
    const claims: string[] = [];
    const lines: string[] = [];
    const stop = new AbortController();
    const role = startSchedulerRole(
      {
        clock,
        lease: {
          tryAcquire: () => Promise.resolve(true),
          renew: () => Promise.resolve(true),
          release: () => Promise.resolve(),
          holder: () => Promise.resolve(undefined),
        },
        fires: {
          lastFire: () =>
            failures-- > 0
              ? Promise.reject(new Error('Connection terminated unexpectedly'))
              : Promise.resolve(new Date('2026-03-01T10:00:00Z')),
          claim: (dag, kind, at) => Promise.resolve(claims.push(`${kind} ${at.toISOString()}`) > 0),
        },
        dags: () => Promise.resolve([minutely()]),
        runs: {
          startLoaded: () => Promise.resolve({ record: { dagRunId: 'r1' }, queued: false }),
          stopAll: () => Promise.resolve([]),
          restart: () => Promise.resolve(undefined),
          listRuns: () => Promise.resolve([]),
        },
        queues: {
          reconcile: () => Promise.resolve(),
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
    // two failed reads wait 250 + 500 ms; 10:01 is fired then, long before 10:02
    for (let t = 0; t < 5_000 && claims.length === 0; t += 50) await clock.advanceBy(50);
    expect(claims).toEqual(['start 2026-03-01T10:01:00.000Z']);
    expect(clock.now().getTime()).toBeLessThan(Date.parse('2026-03-01T10:01:05Z'));
    expect(lines.filter((l) => l.includes('cannot be read'))).toHaveLength(2);
    stop.abort();
    await clock.advanceBy(10_000);
    await role.done;
  });
});
