import { existsSync, mkdtempSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RunStatus, systemClock, type Clock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { makeRecord } from '@trellis/testkit';
import { fd } from '../fs/fd.js';
import { FsRunStore } from './fs-run-store.js';
import { RUN_LOCK, tryLockRun } from './run-lock.js';

const snapshot = { dag: { name: 'etl', steps: [] }, localDags: [] };

let dir: string;
const newStore = (clock: Clock = systemClock): FsRunStore =>
  new FsRunStore({ dataDir: join(dir, 'data'), logDir: join(dir, 'logs'), clock });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-run-lock-'));
});
/** The lock file of the run `rec` of `etl`, created by `store`. */
const lockOf = async (store: FsRunStore, rec: DagRunRecord): Promise<string> => {
  await store.createRun(rec, snapshot);
  const runDir = join(dir, 'data/runs/etl', rec.dagRunId);
  expect(existsSync(runDir)).toBe(true);
  return join(runDir, RUN_LOCK);
};

afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

describe("the run's lock across processes", () => {
  it("keeps another process's plain save out of a swap's window between its read and its rename", async () => {
    const swapper = newStore();
    // the other process: its clock tells when its save waits for the lock
    let waiting!: () => void;
    const saverWaits = new Promise<void>((resolve) => (waiting = resolve));
    const saver = newStore({
      now: () => systemClock.now(),
      sleep: (ms, signal) => {
        waiting();
        return systemClock.sleep(ms, signal);
      },
    });
    const rec = makeRecord({ status: RunStatus.Queued });
    await swapper.createRun(rec, snapshot);
    // a lost-run failure saved by the other process once the swap has read the revision
    const failed = { ...rec, status: RunStatus.Failed, error: 'lost', revision: 1000 };
    let save: Promise<void> | undefined;
    const rename = fd.rename;
    vi.spyOn(fd, 'rename').mockImplementation(async (from, to) => {
      if (save === undefined) {
        save = saver.saveRun(failed);
        // it lands (no lock), or waits for the swap's
        await Promise.race([save, saverWaits]);
      }
      await rename(from, to);
    });
    const started = { ...rec, status: RunStatus.Running, revision: 1 };
    expect(await swapper.saveRunIf(started, 0)).toBe(true);
    await save;
    const stored = await newStore().getRun(rec);
    expect(stored.revision).toBe(1000);
    expect(stored.status).toBe(RunStatus.Failed);
  });

  it('does not hold the lock while a swap writes and syncs its new file', async () => {
    const store = newStore();
    const rec = makeRecord({ status: RunStatus.Queued });
    const lock = await lockOf(store, rec);
    const held: boolean[] = [];
    const sync = fd.sync;
    vi.spyOn(fd, 'sync').mockImplementation(async (f) => {
      held.push(existsSync(lock));
      await sync(f);
    });
    const done = { ...rec, status: RunStatus.Succeeded, revision: 1 };
    expect(await store.saveRunIf(done, 0)).toBe(true);
    expect(held.length).toBeGreaterThan(0);
    expect(held).not.toContain(true);
  });

  it('leaves alone a lock another process took after its own was removed', () => {
    const rec = makeRecord();
    const own = tryLockRun(dir, rec);
    expect(own).toBeDefined();
    // removed as stale by a process, and taken again by another
    unlinkSync(join(dir, RUN_LOCK));
    writeFileSync(join(dir, RUN_LOCK), '');
    own?.release();
    expect(existsSync(join(dir, RUN_LOCK))).toBe(true);
  });

  it('breaks at once a lock whose owner on this host no longer runs', async () => {
    const store = newStore();
    const rec = makeRecord({ status: RunStatus.Queued });
    const lock = await lockOf(store, rec);
    const gone = 4_194_305; // above the largest pid_max (2^22): no such process
    const owner = { pid: gone, host: hostname(), processStart: '', workerId: 'local' };
    writeFileSync(lock, JSON.stringify(owner));
    await store.saveRun({ ...rec, status: RunStatus.Running, revision: 1 });
    expect((await newStore().getRun(rec)).status).toBe(RunStatus.Running);
    expect(existsSync(lock)).toBe(false);
  });

  it('breaks a fresh ownerless lock after a bounded wait under a clock that never moves', async () => {
    const frozen = new Date();
    const store = newStore({ now: () => frozen, sleep: () => Promise.resolve() });
    const rec = makeRecord({ status: RunStatus.Queued });
    const lock = await lockOf(store, rec);
    writeFileSync(lock, ''); // as an older build leaves it
    utimesSync(lock, frozen, frozen);
    await store.saveRun({ ...rec, status: RunStatus.Running, revision: 1 });
    expect((await newStore().getRun(rec)).status).toBe(RunStatus.Running);
  });
});
