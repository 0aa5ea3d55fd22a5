import { readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * The non-empty log files of a run for `attachLogs`: the run log and every step's `.out` and
 * `.err` file in the run's log folder (the store keeps them side by side), in name order.
 */
export const runLogFiles = async (runLog: string): Promise<string[]> => {
  if (!runLog) return [];
  const dir = dirname(runLog);
  const names = await readdir(dir).catch(() => [] as string[]);
  const files: string[] = [];
  for (const name of names.sort()) {
    const path = join(dir, name);
    const s = await stat(path).catch(() => undefined);
    if (s?.isFile() && s.size > 0) files.push(path);
  }
  return files;
};
