import { describe, expect, it } from 'vitest';
import { parseDagFile } from '@trellis/spec';
import { FakeClock } from '@trellis/testkit';
import type { ScheduledDag } from '../cron-scheduler.js';
import { fireKey, RESUME_MARK_KEY, type FireLedger } from './fire-ledger.js';
import { idleRoleDeps } from '../../test/support/role-deps.js';
import { startSchedulerRole } from './scheduler-role.js';

const scheduled = (name: string, cron: string): ScheduledDag => {
  const file = parseDagFile(`schedule: "${cron}"\nsteps:\n  - "true"\n`, { name });
  return { fileName: name, dag: file.main.dag, suspended: false };
};
const minutely = (name: string): ScheduledDag => scheduled(name, '* * * * *');

/** A fire ledger in memory: its latest time per key, as the PostgreSQL ledger answers. */
type Ledger = Map<string, Date>;

/**
 * A leader taking the lead on `clock` over `ledger`; `failReads` reads of the ledger fail first;
 * `killed`: its claims never answer (the process dies as it claims); `diesAfter`: so after that
 * many claims made; `held`: whether it may hold the lease (true when absent). Resolves the
 * claims made.
 */
const leader = (
  clock: FakeClock,
  dags: ScheduledDag[],
  ledger: Ledger,
  opts: {
    failReads?: number;
    killed?: boolean;
    diesAfter?: number;
    held?: { value: boolean };
  } = {},
) => {
  let failReads = opts.failReads ?? 0;
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
    markResumed: (at) => {
      if ((ledger.get(RESUME_MARK_KEY)?.getTime() ?? -Infinity) < at.getTime())
        ledger.set(RESUME_MARK_KEY, at);
      return Promise.resolve();
    },
    claim: (dag, kind, when) => {
      if (opts.killed || claims.length >= (opts.diesAfter ?? Infinity))
        return new Promise<boolean>(() => undefined);
      const key = `${fireKey(dag, kind)} ${when.toISOString()}`;
      const mine = ledger.get(fireKey(dag, kind))?.getTime() !== when.getTime();
      if (mine) {
        claims.push(key);
        ledger.set(fireKey(dag, kind), when);
      }
      return Promise.resolve(mine);
    },
  };
  const stop = new AbortController();
  const role = startSchedulerRole(
    {
      lease: {
        tryAcquire: () => Promise.resolve(opts.held?.value ?? true),
        renew: () => Promise.resolve(opts.held?.value ?? true),
        release: () => Promise.resolve(),
        holder: () => Promise.resolve(undefined),
      },
      fires,
      dags: () => Promise.resolve(dags),
      ...idleRoleDeps(clock, lines),
    },
    stop.signal,
  );
  /** Moves the clock on in 50 ms steps until `n` claims were made or `maxMs` passed. */
  const untilClaims = async (n: number, maxMs: number) => {
    for (let t = 0; t < maxMs && claims.length < n; t += 50) await clock.advanceBy(50);
  };
  const end = async () => {
    stop.abort();
    await clock.advanceBy(10_000);
    await role.done;
  };
  /** Moves the clock on `ms` in 50 ms steps. */
  const advance = (ms: number) => untilClaims(Infinity, ms);
  const failReadsNext = (n: number) => void (failReads = n);
  return {
    clock,
    claims,
    lines,
    untilClaims,
    advance,
    end,
    failReadsNext,
    kill: () => stop.abort(),
  };
};

/** A leader taking over at `at` over a ledger already holding `recorded` (key to ISO time). */
const takeOver = (
  at: string,
  dags: ScheduledDag[],
  recorded: Record<string, string>,
  failReads = 0,
) =>
  leader(
    new FakeClock(at),
    dags,
    new Map(Object.entries(recorded).map(([k, v]) => [k, new Date(v)])),
    { failReads },
  );

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

  it('fires the minute its predecessor died before claiming, on a ledger that held no fire', async () => {
    // the first leader of a new cluster takes the lead at 10:00:30, and is killed at 10:01 as it
    // claims that minute: nothing of it reached the ledger but its resume mark
    const clock = new FakeClock('2026-03-01T10:00:30Z');
    const ledger: Ledger = new Map();
    const first = leader(clock, [minutely('tick')], ledger, { killed: true });
    await first.advance(30_500);
    first.kill();
    expect(ledger.has('tick')).toBe(false);
    // the survivor takes over at 10:01:03 and fires 10:01 at once, then 10:02: each once
    await first.advance(2_500);
    const second = leader(clock, [minutely('tick')], ledger);
    await second.untilClaims(1, 5_000);
    expect(second.claims).toEqual(['tick 2026-03-01T10:01:00.000Z']);
    await second.untilClaims(2, 60_000);
    expect(second.claims).toEqual([
      'tick 2026-03-01T10:01:00.000Z',
      'tick 2026-03-01T10:02:00.000Z',
    ]);
    await second.end();
  });

  it('fires a DAG with no fire since the floor that its predecessor died before claiming, the same minute as another', async () => {
    // "tick" every minute, "hourly" at :00; the first leader takes the lead at 10:59:30, claims
    // tick 11:00 and is killed before it claims hourly 11:00 ("hourly" has no fire in the ledger)
    const clock = new FakeClock('2026-03-01T10:59:30Z');
    const ledger: Ledger = new Map();
    const dags = [minutely('tick'), scheduled('hourly', '0 * * * *')];
    const first = leader(clock, dags, ledger, { diesAfter: 1 });
    await first.untilClaims(1, 60_000);
    expect(first.claims).toEqual(['tick 2026-03-01T11:00:00.000Z']);
    first.kill();
    // the survivor takes over at 11:00:03: hourly 11:00 at once (not 12:00), then tick 11:01
    await first.advance(2_500);
    const second = leader(clock, dags, ledger);
    await second.untilClaims(1, 5_000);
    expect(second.claims).toEqual(['hourly 2026-03-01T11:00:00.000Z']);
    await second.untilClaims(2, 60_000);
    expect(second.claims).toEqual([
      'hourly 2026-03-01T11:00:00.000Z',
      'tick 2026-03-01T11:01:00.000Z',
    ]);
    await second.end();
  });

  it('leading again after a read of the ledger it gave up, resumes from then, not from its old lead', async () => {
    const clock = new FakeClock('2026-03-01T10:00:30Z');
    const held = { value: true };
    const t = leader(clock, [minutely('tick')], new Map(), { held });
    await t.untilClaims(1, 60_000);
    expect(t.claims).toEqual(['tick 2026-03-01T10:01:00.000Z']);
    // it loses the lead until 10:20, and leads again while the ledger cannot be read (60 s)
    held.value = false;
    t.failReadsNext(Infinity);
    while (clock.now().getTime() < Date.parse('2026-03-01T10:20:00Z')) await clock.advanceBy(1_000);
    held.value = true;
    await t.untilClaims(2, 120_000);
    // its first fire then is 10:21, not 10:02 (a minute long claimed by the other leader)
    expect(t.claims).toEqual(['tick 2026-03-01T10:01:00.000Z', 'tick 2026-03-01T10:21:00.000Z']);
    expect(t.lines.filter((l) => l.includes('given up'))).toHaveLength(1);
    await t.end();
  });

  it('fires nothing due before the first leader of a cluster took the lead', async () => {
    const t = takeOver('2026-03-01T10:00:30Z', [minutely('tick')], {});
    await t.untilClaims(1, 60_000);
    expect(t.claims).toEqual(['tick 2026-03-01T10:01:00.000Z']);
    await t.end();
  });
});
