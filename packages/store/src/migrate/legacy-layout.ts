import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isMissing } from '../fs/fs-errors.js';

/** Prefix of the folder migrated legacy folders are moved into. */
export const ARCHIVE_PREFIX = 'history_migrated_';

/** A legacy history file: `<dagName>.<YYYYMMDD.HH:MM:SS.mmm>Z.<requestId>.dat`. */
export interface LegacyFile {
  /** The legacy DAG folder (`<dataDir>/<dagName>[-<hash>]`). */
  readonly dir: string;
  readonly path: string;
  /** The DAG name the file name starts with. */
  readonly dagName: string;
}

/** `<name>.<YYYYMMDD>.<HH:MM:SS|HHMMSS>.<mmm>[Z].<id>.dat`: the name may itself hold dots. */
const FILE_NAME = /^(.+)\.(\d{8})\.(\d{2}:?\d{2}:?\d{2})\.(\d{3})Z?\.([^.]+)\.dat$/;

/** The DAG name of a legacy file name, or undefined for another file. */
export const dagNameOfLegacyFile = (file: string): string | undefined => FILE_NAME.exec(file)?.[1];

/**
 * The legacy DAG folders under `dataDir` (as the peer does: any subfolder with a `.dat` file;
 * archives and dot-folders excluded), each with its `.dat` files in name order.
 */
export const findLegacyFolders = async (
  dataDir: string,
): Promise<{ dir: string; files: LegacyFile[] }[]> => {
  let entries;
  try {
    entries = await readdir(dataDir, { withFileTypes: true });
  } catch (e) {
    if (isMissing(e)) return [];
    throw e;
  }
  const out: { dir: string; files: LegacyFile[] }[] = [];
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (!e.isDirectory() || e.name.startsWith('.') || e.name.startsWith(ARCHIVE_PREFIX)) continue;
    const dir = join(dataDir, e.name);
    const names = (await readdir(dir)).filter((n) => n.endsWith('.dat')).sort();
    if (names.length === 0) continue;
    out.push({
      dir,
      files: names.map((n) => ({
        dir,
        path: join(dir, n),
        dagName: dagNameOfLegacyFile(n) ?? e.name.replace(/-[0-9a-f]{4,}$/, ''),
      })),
    });
  }
  return out;
};
