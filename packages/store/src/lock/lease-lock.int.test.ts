import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '@trellis/core';
import { FakeClock } from '@trellis/testkit';
import { currentOwner } from '../owner/process-owner.js';
import { LeaseLock } from './lease-lock.js';

const lockPath = (): string =>
  join(mkdtempSync(join(tmpdir(), 'trellis-lease-')), 'scheduler.lock');

describe('LeaseLock', () => {
  it('lets one holder in at a time and passes on when released', async () => {
    const path = lockPath();
    const a = new LeaseLock({ path, owner: currentOwner(), clock: systemClock });
    const b = new LeaseLock({ path, owner: currentOwner(), clock: systemClock });
    expect(await a.tryAcquire()).toBe(true);
    expect(await a.tryAcquire()).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    expect(await a.renew()).toBe(true);
    expect(await b.renew()).toBe(false);
    await a.release();
    expect(await b.tryAcquire()).toBe(true);
    expect(await a.renew()).toBe(false);
  });

  it('takes over from a holder process that died', async () => {
    const path = lockPath();
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    const pid = child.pid ?? 0;
    await new Promise((r) => child.on('exit', r));
    const dead = { ...currentOwner(), pid, processStart: '' };
    writeFileSync(
      path,
      JSON.stringify({ owner: dead, token: 'old', renewedAt: systemClock.now().toISOString() }),
    );
    const lock = new LeaseLock({ path, owner: currentOwner(), clock: systemClock });
    expect(await lock.tryAcquire()).toBe(true);
    expect((await lock.holder())?.owner.pid).toBe(process.pid);
  });

  it('takes over from a holder on another host only once it stopped renewing', async () => {
    const path = lockPath();
    const clock = new FakeClock('2026-03-01T10:00:00Z');
    const remote = { pid: 1, host: 'elsewhere', processStart: '', workerId: 'local' };
    writeFileSync(
      path,
      JSON.stringify({ owner: remote, token: 'x', renewedAt: '2026-03-01T09:59:50Z' }),
    );
    const lock = new LeaseLock({ path, owner: currentOwner(), clock, staleMs: 30_000 });
    expect(await lock.tryAcquire()).toBe(false);
    await clock.advanceBy(25_000);
    expect(await lock.tryAcquire()).toBe(true);
  });

  it('lets exactly one of many contenders take over a dead holder', async () => {
    for (let trial = 0; trial < 20; trial++) {
      const path = lockPath();
      const dead = { ...currentOwner(), pid: 2 ** 22 + trial, processStart: '' };
      writeFileSync(
        path,
        JSON.stringify({ owner: dead, token: 'old', renewedAt: systemClock.now().toISOString() }),
      );
      const locks = Array.from(
        { length: 4 },
        () => new LeaseLock({ path, owner: currentOwner(), clock: systemClock }),
      );
      const won = await Promise.all(locks.map((l) => l.tryAcquire()));
      expect(won.filter(Boolean)).toHaveLength(1);
    }
  });

  it('replaces an unreadable lease file', async () => {
    const path = lockPath();
    writeFileSync(path, '{half');
    const lock = new LeaseLock({ path, owner: currentOwner(), clock: systemClock });
    expect(await lock.tryAcquire()).toBe(true);
  });
});
