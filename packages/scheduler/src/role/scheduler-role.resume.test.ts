import { describe, expect, it } from 'vitest';
import { parseDagFile } from '@trellis/spec';
import { FakeClock } from '@trellis/testkit';
import type { ScheduledDag } from '../cron-scheduler.js';
import { fireKey, startSchedulerRole, type FireLedger } from './scheduler-role.js';

const minutely = (name: string): ScheduledDag => {
  const file = parseDagFile('schedule: "* * * * *"\nsteps:\n  - "true"\n', { name });
  return { fileName: name, dag: file.main.dag, suspended: false };
};

/**
 * A leader taking over at `at` over a fire ledger already holding `recorded` (ledger key to
 * ISO time); `failReads` reads of the ledger fail first. Resolves the claims made.
 */
const takeOver = (
  at: string,
  dags: ScheduledDag[],
  recorded: Record<string, string>,
  failReads = 0,
) => {
  const clock = new FakeClock(at);
  const ledger = new Map(Object.entries(recorded).map(([k, v]) => [k, new Date(v)]));
  const claims: string[] = [];
  const lines: string[] = [];
  const read = <T>(value: () => T): Promise<T> =>
    failReads-- > 0
      ? Promise.reject(new Error('Connection terminated unexpectedly'))
      : Promise.resolve(value());
  const fires: FireLedger = {
    lastFire: () => read(() => [...ledger.values()].sort((a, b) => b.getTime() - a.getTime())[0]),
    lastFiresSince: (since) =>
      read(() => new Map([...ledger].filter(([, d]) => d.getTime() >= since.getTime()))),
    claim: (dag, kind, when) => {
      const key = `${fireKey(dag, kind)} ${when.toISOString()}`;
      const mine = ledger.get(fireKey(dag, kind))?.getTime() !== when.getTime();
      if (mine) claims.push(key);
      return Promise.resolve(mine);
    },
  };
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
      fires,
      dags: () => Promise.resolve(dags),
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
  /** Moves the clock on in 50 ms steps until a claim was made or `maxMs` passed. */
  const untilClaims = async (n: number, maxMs: number) => {
    for (let t = 0; t < maxMs && claims.length < n; t += 50) await clock.advanceBy(50);
  };
  const end = async () => {
    stop.abort();
    await clock.advanceBy(10_000);
    await role.done;
  };
  return { clock, claims, lines, untilClaims, end };
};

describe('a new leader resuming cron', () => {
  it('reads the last fire again while the read fails, and fires at once the minute due since', async () => {
    // the predecessor fired 10:00 and died; this instance takes the lead at 10:01:02
    const t = takeOver(
      '2026-03-01T10:01:02Z',
      [minutely('tick')],
      { tick: '2026-03-01T10:00:00Z' },
      2,
    );
    // two failed reads wait 250 + 500 ms; 10:01 is fired then, long before 10:02
    await t.untilClaims(1, 5_000);
    expect(t.claims).toEqual(['tick 2026-03-01T10:01:00.000Z']);
    expect(t.clock.now().getTime()).toBeLessThan(Date.parse('2026-03-01T10:01:05Z'));
    expect(t.lines.filter((l) => l.includes('cannot be read'))).toHaveLength(2);
    await t.end();
  });

  it('resumes each DAG from its own last fire: a DAG its predecessor did not reach that minute is fired', async () => {
    // both due at 10:01; the predecessor claimed "a" and died before "b"
    const t = takeOver('2026-03-01T10:01:04Z', [minutely('a'), minutely('b')], {
      a: '2026-03-01T10:01:00Z',
      b: '2026-03-01T10:00:00Z',
    });
    await t.untilClaims(1, 5_000);
    expect(t.claims).toEqual(['b 2026-03-01T10:01:00.000Z']);
    // and the next minute both, once each
    await t.untilClaims(3, 60_000);
    expect(t.claims.sort()).toEqual([
      'a 2026-03-01T10:02:00.000Z',
      'b 2026-03-01T10:01:00.000Z',
      'b 2026-03-01T10:02:00.000Z',
    ]);
    await t.end();
  });
});
