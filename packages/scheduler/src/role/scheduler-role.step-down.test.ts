import { describe, expect, it } from 'vitest';
import { FakeClock } from '@trellis/testkit';
import { idleRoleDeps } from '../../test/support/role-deps.js';
import { startSchedulerRole } from './scheduler-role.js';

/** A leader whose second queue pass hangs (its store calls wait for connections) until ended. */
const leader = () => {
  const clock = new FakeClock('2026-03-01T10:00:00Z');
  const lines: string[] = [];
  const t = { held: true, passes: 0, endPass: (): void => undefined };
  const stop = new AbortController();
  const role = startSchedulerRole(
    {
      lease: {
        tryAcquire: () => Promise.resolve(t.held),
        renew: () => Promise.resolve(t.held),
        release: () => Promise.resolve(),
        holder: () => Promise.resolve(undefined),
      },
      leaseEveryMs: 1000,
      leaseTtlMs: 3000,
      dags: () => Promise.resolve([]),
      ...idleRoleDeps(clock, lines, () =>
        ++t.passes === 2 ? new Promise<void>((r) => (t.endPass = r)) : Promise.resolve(),
      ),
    },
    stop.signal,
  );
  /** Serves until the hanging pass, then another process takes the lease. */
  const stepDown = async (): Promise<void> => {
    for (let ms = 0; ms < 5_000 && t.passes < 2; ms += 50) await clock.advanceBy(50);
    expect(role.status.running()).toBe(true);
    // another process takes the lease: the next renewal says so
    t.held = false;
    for (let ms = 0; ms < 5_000 && !lines.some((l) => l.includes('stepping down')); ms += 50)
      await clock.advanceBy(50);
    expect(lines.some((l) => l.includes('another process took the scheduler lease'))).toBe(true);
  };
  const end = async (): Promise<void> => {
    t.endPass();
    stop.abort();
    await clock.advanceBy(10_000);
    await role.done;
  };
  return { clock, role, stepDown, end };
};

describe('a leader stepping down while its queue pass still runs', () => {
  it('says it is no longer the leader at once, not when the pass ends', async () => {
    const { role, stepDown, end } = leader();
    await stepDown();
    expect(role.status.running()).toBe(false);
    expect(role.status.leaseAgeMs()).toBeUndefined();
    expect(role.status.alive()).toBe(true);
    await end();
    expect(role.status.running()).toBe(false);
  });

  it('is not alive when that pass never ends, and alive again once its loops ended', async () => {
    const { clock, role, stepDown, end } = leader();
    await stepDown();
    expect(role.status.alive()).toBe(true);
    await clock.advanceBy(30_000);
    expect(role.status.running()).toBe(false);
    expect(role.status.alive()).toBe(false);
    await end();
    expect(role.status.alive()).toBe(true);
  });
});
