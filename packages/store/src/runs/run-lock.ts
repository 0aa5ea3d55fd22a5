import { closeSync, openSync, unlinkSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { isMissing } from '../fs/fs-errors.js';
import { runNotFound } from './run-locations.js';
import { storageRootOf } from './run-summary.js';

/**
 * Lock file of a run's folder (dot-names are not runs), held from the revision read to the
 * rename by every replacement of the record: `saveRunIf` (which gives up when it is taken) and
 * `saveRun` (which waits). The name is the one `saveRunIf` used alone before, so a process of an
 * older build still excludes this one's saves from its swaps' windows.
 */
export const RUN_LOCK = '.swap.lock';
/** A run lock older than this was left by a crashed process. */
const RUN_LOCK_STALE_MS = 10_000;
/** Waits of `lockRun` between attempts while another process holds the lock, in ms (the last repeats). */
const RUN_LOCK_WAITS_MS = [1, 2, 5, 10, 20] as const;

/** A held run lock. */
export interface RunLock {
  /** Removes the lock file (a lock file already gone is not an error). */
  release(): void;
}

/**
 * Takes the lock of the run folder `dir`, or undefined while another process holds it.
 * Synchronous calls: creating and removing an empty file costs a few microseconds of CPU,
 * several times less than the same calls through the thread pool (as the change notes,
 * dag-changes.ts), and it is done at every save. Errors: `not_found` when the run's folder is
 * gone.
 */
export const tryLockRun = (dir: string, record: DagRunRecord): RunLock | undefined => {
  const path = join(dir, RUN_LOCK);
  try {
    closeSync(openSync(path, 'wx'));
    return { release: () => unlinkQuietly(path) };
  } catch (e) {
    if (isMissing(e)) throw runNotFound(record, storageRootOf(record));
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return undefined;
  }
};

/**
 * Removes the lock of the run folder `dir` when it is older than `RUN_LOCK_STALE_MS` (left by a
 * crashed process), for the next attempt. Asynchronous: it also lets a waiting save yield to the
 * event loop whatever its clock's `sleep` does.
 */
export const clearStaleLock = async (dir: string, clock: Clock): Promise<void> => {
  const path = join(dir, RUN_LOCK);
  const st = await stat(path).catch(() => undefined); // undefined: released meanwhile
  if (st !== undefined && clock.now().getTime() - st.mtimeMs > RUN_LOCK_STALE_MS)
    unlinkQuietly(path);
};

/** Takes the lock of the run folder `dir`, waiting while another process holds it. */
export const lockRun = async (
  dir: string,
  record: DagRunRecord,
  clock: Clock,
): Promise<RunLock> => {
  for (let attempt = 0; ; attempt++) {
    const lock = tryLockRun(dir, record);
    if (lock !== undefined) return lock;
    await clearStaleLock(dir, clock);
    await clock.sleep(RUN_LOCK_WAITS_MS[Math.min(attempt, RUN_LOCK_WAITS_MS.length - 1)] ?? 20);
  }
};

const unlinkQuietly = (path: string): void => {
  try {
    unlinkSync(path);
  } catch {
    // gone already (removed as stale by another process, or the run deleted)
  }
};
