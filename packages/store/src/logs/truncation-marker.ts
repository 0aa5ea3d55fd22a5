import { readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isMissing } from '../fs/fs-errors.js';

/**
 * The marker beside a log file a write to which failed: `.<file>.truncated`, holding why. Other
 * processes sharing the store (the server reading a log a CLI run wrote) learn from it that the
 * log is incomplete. Dot-names are never logs.
 */
const truncationMarkerOf = (logPath: string): string =>
  join(dirname(logPath), `.${basename(logPath)}.truncated`);

/** The reason kept when the marker could be made but not filled (the disk was full). */
const UNKNOWN_REASON = 'a write to this log file failed';

/**
 * Leaves the marker of `logPath` with `reason`, best effort: on a full disk the file usually
 * still gets made (empty: no data block) even when its content cannot be written.
 */
export const markTruncated = async (logPath: string, reason: string): Promise<void> => {
  await writeFile(truncationMarkerOf(logPath), reason, { flag: 'w' }).catch(() => undefined);
};

/** Why `logPath` is incomplete per its marker; undefined when it has none. */
export const readTruncation = async (logPath: string): Promise<string | undefined> => {
  try {
    const text = await readFile(truncationMarkerOf(logPath), 'utf8');
    return text === '' ? UNKNOWN_REASON : text;
  } catch (e) {
    if (isMissing(e)) return undefined;
    return UNKNOWN_REASON;
  }
};
