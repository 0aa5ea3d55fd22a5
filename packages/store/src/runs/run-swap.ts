import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { RunStatus, type Clock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { fd } from '../fs/fd.js';
import { isMissing } from '../fs/fs-errors.js';
import { STATUS_FILE } from '../layout/store-layout.js';
import { clearStaleLock, tryLockRun } from './run-lock.js';
import { runNotFound } from './run-locations.js';
import { storageRootOf } from './run-summary.js';
import { readDiskRevision } from './status-file.js';

/** States whose record and index line are synced to disk (they must survive a power loss). */
export const isDurableStatus = (s: RunStatus): boolean =>
  s !== RunStatus.Running && s !== RunStatus.NotStarted;

/**
 * The inode of a file this process just wrote (a synchronous stat), undefined if it cannot be
 * read.
 */
export const inoOf = (path: string): bigint | undefined => {
  try {
    return statSync(path, { bigint: true }).ino;
  } catch {
    return undefined;
  }
};

/**
 * `RunWriter.saveRunIf` under the run's lock (run-lock.ts: one process at a time between the
 * read and the rename, saves included): once `written`, renames `temp` over the run's status
 * file if its revision is still `expect`, calling `onRenamed` with the inode of the file it came
 * from (if known) once it is in place, before the directory sync.
 */
export const swapRecord = async (
  record: DagRunRecord,
  temp: string,
  written: Promise<Error | undefined>,
  expect: number,
  clock: Clock,
  onRenamed: (ino: bigint | undefined) => void,
): Promise<void> => {
  const dir = dirname(temp);
  // written (and synced) before the lock: the lock covers only the read and the rename
  const failed = await written;
  if (failed !== undefined)
    throw isMissing(failed) ? runNotFound(record, storageRootOf(record)) : failed;
  const lock = tryLockRun(dir, record);
  if (lock === undefined) {
    await clearStaleLock(dir, clock); // another process is deciding or saving right now
    return;
  }
  try {
    const statusPath = join(dir, STATUS_FILE);
    if ((await readDiskRevision(statusPath)) !== expect) return;
    const ino = inoOf(temp);
    await fd.rename(temp, statusPath);
    onRenamed(ino);
  } finally {
    lock.release();
  }
  // the new name, not only the content, must survive a power loss
  if (isDurableStatus(record.status)) await fd.syncDir(dir);
};
