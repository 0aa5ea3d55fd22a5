import { describe, expect, it } from 'vitest';
import { parseDagFile } from '@trellis/spec';
import { FakeClock } from '@trellis/testkit';
import { CronScheduler } from './cron-scheduler.js';
import { CLAIM_GIVE_UP_MS, claimFire } from './fire-claim.js';

const minutely = () => {
  const file = parseDagFile('schedule: "* * * * *"\nsteps:\n  - "true"\n', { name: 'm' });
  return { fileName: 'm', dag: file.main.dag, suspended: false };
};

/** A scheduler whose fire claims fail `failures` times before they are made. */
const setup = (failures: number) => {
  const clock = new FakeClock('2026-03-01T10:00:59.900Z');
  const calls: string[] = [];
  const lines: string[] = [];
  let left = failures;
  const scheduler = new CronScheduler({
    clock,
    dags: () => Promise.resolve([minutely()]),
    actions: {
      start: (_d, at) => Promise.resolve(void calls.push(`start ${at.toISOString()}`)),
      stop: () => Promise.resolve(),
      restart: () => Promise.resolve(),
      latestRun: () => Promise.resolve(undefined),
      isRunning: () => Promise.resolve(false),
    },
    log: (l) => lines.push(l),
    claim: () => {
      if (left-- > 0) return Promise.reject(new Error('timeout exceeded when trying to connect'));
      return Promise.resolve(true);
    },
  });
  return { clock, calls, lines, scheduler };
};

/** Moves the fake clock on in 50 ms steps until `done` holds (at most `maxMs`). */
const advanceUntil = async (clock: FakeClock, done: () => boolean, maxMs: number) => {
  for (let t = 0; t < maxMs && !done(); t += 50) await clock.advanceBy(50);
  return done();
};

describe('a fire whose claim fails', () => {
  it('is claimed again until it is made, and fired once', async () => {
    const { clock, calls, lines, scheduler } = setup(3);
    const stop = new AbortController();
    const loop = scheduler.run(stop.signal);
    // 10:01 is due in 100 ms; three failed claims wait 250 + 500 + 1000 ms
    expect(await advanceUntil(clock, () => calls.length > 0, 10_000)).toBe(true);
    expect(calls).toEqual(['start 2026-03-01T10:01:00.000Z']);
    expect(clock.now().toISOString()).toBe('2026-03-01T10:01:01.750Z');
    expect(lines.filter((l) => l.includes('trying again'))).toHaveLength(3);
    await advanceUntil(clock, () => false, 30_000);
    expect(calls).toEqual(['start 2026-03-01T10:01:00.000Z']); // once
    stop.abort();
    await loop;
  });

  it('is given up when the loop stops (the next leader resumes from the ledger)', async () => {
    const { clock, calls, lines, scheduler } = setup(1_000);
    const stop = new AbortController();
    const loop = scheduler.run(stop.signal);
    await advanceUntil(clock, () => lines.some((l) => l.includes('trying again')), 10_000);
    stop.abort();
    await loop; // resolves: the retry does not hold the stop
    expect(calls).toEqual([]);
    expect(lines.some((l) => l.includes('fired by another instance'))).toBe(false);
  });

  it('gives up after CLAIM_GIVE_UP_MS and says so', async () => {
    const clock = new FakeClock('2026-03-01T10:00:00Z');
    const lines: string[] = [];
    let result: boolean | undefined | 'pending' = 'pending';
    void claimFire(
      () => Promise.reject(new Error('the lease token 7 was refused')),
      clock,
      undefined,
      (m) => lines.push(m),
    ).then((r) => (result = r));
    expect(await advanceUntil(clock, () => result !== 'pending', 2 * CLAIM_GIVE_UP_MS)).toBe(true);
    expect(result).toBeUndefined();
    expect(clock.now().getTime() - Date.parse('2026-03-01T10:00:00Z')).toBeLessThanOrEqual(
      CLAIM_GIVE_UP_MS,
    );
    expect(lines.at(-1)).toMatch(/the lease token 7 was refused; given up after \d+ ms/);
  });

  it("taken by another instance: a start is made sure of (its run id is the fire's), a stop is not", async () => {
    const clock = new FakeClock('2026-03-01T10:00:30Z');
    const calls: string[] = [];
    const file = parseDagFile(
      'schedule:\n  start: "* * * * *"\n  stop: "* * * * *"\nsteps:\n  - "true"\n',
      { name: 'both' },
    );
    const scheduler = new CronScheduler({
      clock,
      dags: () => Promise.resolve([{ fileName: 'both', dag: file.main.dag, suspended: false }]),
      actions: {
        start: (_d, at) => Promise.resolve(void calls.push(`start ${at.toISOString()}`)),
        stop: () => Promise.resolve(void calls.push('stop')),
        restart: () => Promise.resolve(),
        latestRun: () => Promise.resolve(undefined),
        isRunning: () => Promise.resolve(true),
      },
      log: () => undefined,
      claim: () => Promise.resolve(false),
    });
    await scheduler.tick();
    await clock.setTime('2026-03-01T10:01:00Z');
    await scheduler.tick();
    await scheduler.idle();
    expect(calls).toEqual(['start 2026-03-01T10:01:00.000Z']);
  });
});
