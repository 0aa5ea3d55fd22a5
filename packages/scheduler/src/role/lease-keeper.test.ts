import { FakeClock } from '@trellis/testkit';
import { describe, expect, it } from 'vitest';
import { keepLease, safeHoldMs } from './lease-keeper.js';
import type { SchedulerLease } from './scheduler-role.js';

/** A lease whose renewals answer as the test says: a value, an error, or never (a partition). */
const scriptedLease = (answers: (() => Promise<boolean>)[]) => {
  let calls = 0;
  const lease: SchedulerLease = {
    tryAcquire: () => Promise.resolve(true),
    renew: () => {
      const next = answers[Math.min(calls, answers.length - 1)]!;
      calls += 1;
      return next();
    },
    release: () => Promise.resolve(),
    holder: () => Promise.resolve(undefined),
  };
  return { lease, calls: () => calls };
};

const held = () => Promise.resolve(true);
const hangs = () => new Promise<boolean>(() => undefined);
const fails = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));

const start = (lease: SchedulerLease, timing: { everyMs: number; ttlMs?: number }) => {
  const clock = new FakeClock(0);
  const lines: string[] = [];
  const inner = new AbortController();
  let renewals = 0;
  const done = keepLease(
    lease,
    timing,
    clock,
    (l) => lines.push(l),
    inner,
    0,
    () => renewals++,
  );
  return { clock, lines, inner, done, renewals: () => renewals };
};

describe('keepLease', () => {
  it('keeps leading while renewals succeed', async () => {
    const { lease } = scriptedLease([held]);
    const k = start(lease, { everyMs: 1000, ttlMs: 3000 });
    await k.clock.advanceBy(10_000);
    expect(k.renewals()).toBe(10);
    expect(k.inner.signal.aborted).toBe(false);
    k.inner.abort();
    await k.done;
  });

  it('steps down before the lease can expire when a renewal hangs (a partition)', async () => {
    const { lease } = scriptedLease([held, hangs]);
    const k = start(lease, { everyMs: 1000, ttlMs: 3000 });
    await k.clock.advanceBy(2000); // renewed at 1000, hung at 2000
    expect(k.inner.signal.aborted).toBe(false);
    // the renewal that started at 1000 keeps it safely until 1000 + 2250
    await k.clock.advanceBy(1249);
    expect(k.inner.signal.aborted).toBe(false);
    await k.clock.advanceBy(1);
    expect(k.inner.signal.aborted).toBe(true);
    expect(k.clock.now().getTime()).toBe(1000 + safeHoldMs(3000));
    expect(k.clock.now().getTime()).toBeLessThan(1000 + 3000); // before the database expires it
    await k.done;
    expect(k.lines.at(-1)).toMatch(
      /not renewed within 2250 ms .*database reachable.*stepping down/,
    );
  });

  it('retries failed renewals while still safely held, then steps down', async () => {
    const { lease, calls } = scriptedLease([fails]);
    const k = start(lease, { everyMs: 1000, ttlMs: 3000 });
    await k.clock.advanceBy(2249);
    expect(k.inner.signal.aborted).toBe(false);
    expect(calls()).toBeGreaterThan(5); // every 100 ms after the first failure at 1000
    expect(k.lines[0]).toMatch(/renewing the scheduler lease failed: connect ECONNREFUSED/);
    await k.clock.advanceBy(200);
    expect(k.inner.signal.aborted).toBe(true);
    await k.done;
  });

  it('recovers from a failed renewal that a later one makes good', async () => {
    const { lease } = scriptedLease([fails, held]);
    const k = start(lease, { everyMs: 1000, ttlMs: 3000 });
    await k.clock.advanceBy(10_000);
    expect(k.inner.signal.aborted).toBe(false);
    expect(k.renewals()).toBeGreaterThan(5);
    k.inner.abort();
    await k.done;
  });

  it('steps down at once after a pause longer than the lease (SIGSTOP), without renewing', async () => {
    const { lease, calls } = scriptedLease([held]);
    const k = start(lease, { everyMs: 1000, ttlMs: 3000 });
    await k.clock.advanceBy(1000);
    expect(calls()).toBe(1);
    k.clock.jumpTo(new Date(1000 + 60_000 - 1000).toISOString()); // frozen for a minute
    await k.clock.advanceBy(1000);
    expect(k.inner.signal.aborted).toBe(true);
    expect(calls()).toBe(1);
    await k.done;
  });

  it('without a TTL, steps down when a renewal is refused', async () => {
    const { lease } = scriptedLease([held, () => Promise.resolve(false)]);
    const k = start(lease, { everyMs: 1000 });
    await k.clock.advanceBy(2000);
    expect(k.inner.signal.aborted).toBe(true);
    await k.done;
    expect(k.lines).toEqual(['scheduler: another process took the scheduler lease; stepping down']);
  });
});
