import { open, stat, unlink } from 'node:fs/promises';
import { writeFileAtomic } from '../fs/atomic-write.js';
import { errnoOf, messageOf } from '../fs/fs-errors.js';
import { newestFirst } from '../runs/run-filter.js';
import type { IndexAppender } from './index-appender.js';
import { encodeIndexLine, keyOfSummary } from './index-line.js';
import type { IndexState } from './index-state.js';
import { readCompleteLines } from './index-sync.js';

/** What compacting an index needs. */
export interface CompactionDeps {
  readonly path: string;
  readonly state: IndexState;
  readonly appender: IndexAppender;
  /** Brings the state up to date with the file. */
  readonly sync: () => Promise<void>;
  readonly warn: (message: string) => void;
  /** Compact when the file holds more than this many lines per live run. */
  readonly compactFactor: number;
  /** Never compact a file of fewer lines than this. */
  readonly compactMinLines: number;
  /** Age after which another process's compaction lock counts as abandoned, in ms. */
  readonly lockStaleMs: number;
  readonly now: () => Date;
}

/** Compacts the index when its file holds more than `compactFactor` lines per live run. */
export const maybeCompact = async (deps: CompactionDeps): Promise<void> => {
  const { compactFactor, compactMinLines, state } = deps;
  if (state.lines < compactMinLines) return;
  if (state.lines <= compactFactor * Math.max(1, state.entries.size)) return;
  await compact(deps);
};

/**
 * Rewrites the file with one line per live run. A lock file keeps two processes from
 * compacting at once (an abandoned lock is removed after `lockStaleMs`). Lines another process
 * appended to the old file after our last read are copied to the new file; a writer that
 * appended to the old file later sees the inode change and appends again.
 */
const compact = async (deps: CompactionDeps): Promise<void> => {
  const { path, state } = deps;
  const lockPath = `${path}.lock`;
  try {
    await (await open(lockPath, 'wx')).close();
  } catch (e) {
    if (errnoOf(e) !== 'EEXIST') throw e;
    const st = await stat(lockPath).catch(() => undefined);
    if (st !== undefined && deps.now().getTime() - st.mtimeMs > deps.lockStaleMs)
      await unlink(lockPath).catch(() => undefined);
    return;
  }
  try {
    await deps.sync();
    const old = await open(path, 'r');
    try {
      if ((await old.stat()).ino !== state.ino) return;
      const live = [...state.entries.values()].sort((a, b) => newestFirst(b, a));
      const text = live
        .map((r) =>
          encodeIndexLine({ kind: 'put', key: keyOfSummary(r.summary), summary: r.summary }),
        )
        .join('');
      await writeFileAtomic(path, text);
      const late = await readCompleteLines(old, state.offset);
      if (late !== '') await deps.appender.append(late, 0); // the index is reset and read again below
    } finally {
      await old.close();
    }
    state.reset(); // the next answer reads the compacted file from the start
  } catch (e) {
    deps.warn(`run index ${path} could not be compacted: ${messageOf(e)}`);
  } finally {
    await unlink(lockPath).catch(() => undefined);
  }
};
