import {
  closeSync,
  fstatSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '@trellis/core';
import type { DagRunRecord, RunOwner } from '@trellis/spec';
import { isMissing } from '../fs/fs-errors.js';
import { currentOwner, isOwnerAlive } from '../owner/process-owner.js';
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
/** Waits of `lockRun` between attempts while another process holds the lock, in ms. */
const RUN_LOCK_WAITS_MS = [1, 2, 5, 10, 20] as const;
/**
 * Attempts of `lockRun` after which the lock is broken as stale whatever its age: about 20 s
 * with the waits above, past `RUN_LOCK_STALE_MS`; it bounds the wait under a clock that does
 * not move.
 */
const RUN_LOCK_MAX_ATTEMPTS = 1000;

/** A held run lock. */
export interface RunLock {
  /** Removes the lock file if it is still this one (not one another process took since). */
  release(): void;
}

/** What identifies one taking of a lock: its file's inode and its content (owner and count). */
interface LockId {
  readonly ino: bigint;
  readonly text: string | undefined;
}

let taken = 0;

/**
 * Takes the lock of the run folder `dir`, or undefined while another process holds it; the
 * lock file holds its owner (process-owner.ts), so a crashed owner's lock is broken at once.
 * Synchronous calls: creating and removing a small file costs a few microseconds of CPU,
 * several times less than the same calls through the thread pool (as the change notes,
 * dag-changes.ts), and it is done at every save. Errors: `not_found` when the run's folder is
 * gone.
 */
export const tryLockRun = (dir: string, record: DagRunRecord): RunLock | undefined => {
  const path = join(dir, RUN_LOCK);
  let handle: number;
  try {
    handle = openSync(path, 'wx');
  } catch (e) {
    if (isMissing(e)) throw runNotFound(record, storageRootOf(record));
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return undefined;
  }
  const text = JSON.stringify({ ...currentOwner(), taken: ++taken });
  let ino: bigint;
  try {
    try {
      writeSync(handle, text);
      ino = fstatSync(handle, { bigint: true }).ino;
    } finally {
      closeSync(handle);
    }
  } catch (e) {
    unlinkQuietly(path); // a lock nobody would release: every save would wait for it to age
    throw e;
  }
  return { release: () => unlinkIfSame(path, { ino, text }) };
};

/**
 * Removes the lock of the run folder `dir` when it was left by a crashed process: its owner on
 * this host no longer runs, or it is older than `RUN_LOCK_STALE_MS` (or `force`), for the next
 * attempt. Asynchronous: it also lets a waiting save yield to the event loop whatever its
 * clock's `sleep` does.
 */
export const clearStaleLock = async (dir: string, clock: Clock, force = false): Promise<void> => {
  const path = join(dir, RUN_LOCK);
  const st = await stat(path, { bigint: true }).catch(() => undefined); // gone: released
  if (st === undefined) return;
  const id = { ino: st.ino, text: readQuietly(path) };
  const owner = ownerIn(id.text);
  const dead = owner !== undefined && owner.host === hostname() && !isOwnerAlive(owner);
  const old = clock.now().getTime() - Number(st.mtimeMs) > RUN_LOCK_STALE_MS;
  if (force || dead || old) unlinkIfSame(path, id);
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
    await clearStaleLock(dir, clock, attempt >= RUN_LOCK_MAX_ATTEMPTS);
    await clock.sleep(RUN_LOCK_WAITS_MS[Math.min(attempt, RUN_LOCK_WAITS_MS.length - 1)] ?? 20);
  }
};

/** The owner a lock file names, undefined for an empty one (older builds, or being written). */
const ownerIn = (text: string | undefined): RunOwner | undefined => {
  try {
    const owner = JSON.parse(text ?? '') as Partial<RunOwner>;
    if (typeof owner.pid !== 'number' || typeof owner.host !== 'string') return undefined;
    return { processStart: '', workerId: '', ...owner } as RunOwner;
  } catch {
    return undefined;
  }
};

const readQuietly = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/**
 * Removes the lock file at `path` only while it is still the one `id` names (its inode and
 * content, read back to back with the removal, synchronously): a lock another process took
 * since is left alone.
 */
const unlinkIfSame = (path: string, id: LockId): void => {
  try {
    if (statSync(path, { bigint: true }).ino !== id.ino) return;
    if (readFileSync(path, 'utf8') !== id.text) return;
  } catch {
    return; // gone already (removed as stale by another process, or the run deleted)
  }
  unlinkQuietly(path);
};

const unlinkQuietly = (path: string): void => {
  try {
    unlinkSync(path);
  } catch {
    // gone already
  }
};
