import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RunStatus, systemClock, type Clock } from '@trellis/core';
import { makeRecord } from '@trellis/testkit';
import { fd } from '../fs/fd.js';
import { FsRunStore } from './fs-run-store.js';

const snapshot = { dag: { name: 'etl', steps: [] }, localDags: [] };

let dir: string;
const newStore = (clock: Clock = systemClock): FsRunStore =>
  new FsRunStore({ dataDir: join(dir, 'data'), logDir: join(dir, 'logs'), clock });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-run-lock-'));
});
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
});
