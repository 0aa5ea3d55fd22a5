import { statSync } from 'node:fs';
import { open, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RunStatus, type Clock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { fd } from '../fs/fd.js';
import { isMissing } from '../fs/fs-errors.js';
import { STATUS_FILE } from '../layout/store-layout.js';
import { runNotFound } from './run-locations.js';
import { storageRootOf } from './run-summary.js';
import { readDiskRevision } from './status-file.js';

/** Lock file of `saveRunIf` in a run's folder (dot-names are not runs). */
const SWAP_LOCK = '.swap.lock';
/** A swap lock older than this was left by a crashed process. */
const SWAP_LOCK_STALE_MS = 10_000;

/** States whose record and index line are synced to disk (they must survive a power loss). */
export const isDurableStatus = (s: RunStatus): boolean =>
  s !== RunStatus.Running && s !== RunStatus.NotStarted;

/** The inode of a file this process just wrote (a synchronous stat), undefined if it cannot be read. */
export const inoOf = (path: string): bigint | undefined => {
  try {
    return statSync(path, { bigint: true }).ino;
  } catch {
    return undefined;
  }
};

/**
 * `RunWriter.saveRunIf` under the swap lock (one process at a time between the read and the
 * rename): renames the written `temp` over the run's status file if its revision is still
 * `expect`, calling `onRenamed` with the inode of the file it came from (if known) once it is in
 * place, before the directory sync.
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
  const lockPath = join(dir, SWAP_LOCK);
  const lock = await takeLock(lockPath, record, clock);
  if (lock === undefined) return; // another process is deciding right now
  try {
    const statusPath = join(dir, STATUS_FILE);
    if ((await readDiskRevision(statusPath)) !== expect) return;
    const failed = await written;
    if (failed !== undefined)
      throw isMissing(failed) ? runNotFound(record, storageRootOf(record)) : failed;
    const ino = inoOf(temp);
    await fd.rename(temp, statusPath);
    onRenamed(ino);
  } finally {
    // the lock file is removed while its handle closes (an open file can be unlinked)
    await Promise.all([lock.close(), rm(lockPath, { force: true })]);
  }
  // the new name, not only the content, must survive a power loss
  if (isDurableStatus(record.status)) await fd.syncDir(dir);
};

/** The swap lock of a run's folder, or undefined while another process holds it. */
const takeLock = async (
  lockPath: string,
  record: DagRunRecord,
  clock: Clock,
): Promise<FileHandle | undefined> =>
  open(lockPath, 'wx').catch(async (e: unknown) => {
    if (isMissing(e)) throw runNotFound(record, storageRootOf(record));
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    const st = await stat(lockPath).catch(() => undefined);
    // a lock left by a crashed process
    if (st && clock.now().getTime() - st.mtimeMs > SWAP_LOCK_STALE_MS)
      await rm(lockPath, { force: true });
    return undefined;
  });
