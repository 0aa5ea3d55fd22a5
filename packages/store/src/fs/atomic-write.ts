import { randomBytes } from 'node:crypto';
import { unlink } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { fd } from './fd.js';

/** Prefix of temporary files; readers and rebuilds skip names that start with a dot. */
export const TEMP_PREFIX = '.tmp-';

const unlinkP = promisify(unlink);

/** A file's content: text, bytes, or bytes in parts written one after the other. */
export type FileData = string | Uint8Array | readonly Uint8Array[];

const isParts = (d: FileData): d is readonly Uint8Array[] => Array.isArray(d);

/**
 * Counter of this process's temporary names, from a random start: a name left by a crashed
 * process of the same pid (after a reboot) is as unlikely to come again as with random bytes per
 * name, which cost a call into the crypto library at every save (issue 21).
 */
let tempCount = randomBytes(4).readUInt32BE(0);

/**
 * A temporary path next to `path` (same directory, so the rename is atomic), unique in this
 * process (pid and counter). Its file is created with `wx` (`writeNewFile`), so a name taken
 * anyway fails the write instead of sharing the file.
 */
export const tempPathFor = (path: string): string => {
  tempCount = (tempCount + 1) % 2 ** 32;
  return join(
    dirname(path),
    `${TEMP_PREFIX}${basename(path)}.${process.pid}.${tempCount.toString(16)}`,
  );
};

/**
 * Replaces `path` with `data` atomically: writes a temporary file in the same directory, fsyncs
 * it, renames it over `path`, then fsyncs the directory (no syncs when `durable` is false). A
 * process crash leaves either the old or the new content, never a torn file (docs/architecture.md,
 * "Storage"); the syncs add the same guarantee across an operating-system crash or power loss.
 * The temporary file is removed when a later step fails, only when this call created it: on
 * `EEXIST` for its name the file is another writer's. Errors are the file system's (a missing
 * directory is `ENOENT`).
 */
export const writeFileAtomic = async (
  path: string,
  data: FileData,
  opts: { readonly durable?: boolean } = {},
): Promise<void> => {
  const temp = tempPathFor(path);
  // opened by this call: a name taken anyway (EEXIST) is another writer's file, never removed here
  const file = await fd.open(temp, 'wx');
  let renamed = false;
  try {
    await writeOpened(file, data, opts);
    await fd.rename(temp, path);
    renamed = true;
    // the new name, not only the content, must survive a power loss
    if (opts.durable !== false) await fd.syncDir(dirname(path));
  } finally {
    if (!renamed) await unlinkP(temp).catch(() => undefined);
  }
};

/**
 * Writes a new file (it must not exist) without a temporary name: for files in a folder nobody
 * reads until it is renamed into place (a run's record and snapshot at creation). Synced to disk
 * unless `durable` is false.
 */
export const writeNewFile = async (
  path: string,
  data: FileData,
  opts: { readonly durable?: boolean } = {},
): Promise<void> => {
  await writeOpened(await fd.open(path, 'wx'), data, opts);
};

/** Writes `data` to a file just created and open as `file`, syncs it (unless not durable), closes it. */
const writeOpened = async (
  file: number,
  data: FileData,
  opts: { readonly durable?: boolean },
): Promise<void> => {
  try {
    if (isParts(data)) await fd.writev(file, data);
    else await fd.write(file, data);
    if (opts.durable !== false) await fd.sync(file);
  } finally {
    await fd.close(file);
  }
};
