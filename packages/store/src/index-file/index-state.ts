import { newestFirst, toIndexedRun, type IndexedRun } from '../runs/run-filter.js';
import { sameSummaryFields, type RunSummary } from '../runs/run-summary.js';
import type { IndexLine } from './index-line.js';

/**
 * What a `DagIndex` knows of its file: the live entries (the line with the highest revision per
 * key wins, `del` lines remove a key) and how far into which file it has read.
 */
export class IndexState {
  readonly entries = new Map<string, IndexedRun>();
  /** Newest first; undefined when an entry changed since it was sorted. */
  #sorted: IndexedRun[] | undefined;
  loaded = false;
  /** Inode of the file the entries came from: a compaction or rebuild replaces the file. */
  ino = -1;
  /** Bytes consumed: always just after a newline, so a torn last line is read again later. */
  offset = 0;
  /** Complete lines read from the current file (the compaction trigger). */
  lines = 0;

  /** Every entry, newest first (sorted once per change). */
  newestFirst(): readonly IndexedRun[] {
    this.#sorted ??= [...this.entries.values()].sort(newestFirst);
    return this.#sorted;
  }

  /** True when the entry of `key` already has the fields of `summary` (revision aside). */
  holds(key: string, summary: RunSummary): boolean {
    const current = this.entries.get(key)?.summary;
    return current !== undefined && sameSummaryFields(current, summary);
  }

  apply(line: IndexLine): void {
    if (line.kind === 'del') {
      if (this.entries.delete(line.key)) this.#sorted = undefined;
      return;
    }
    const current = this.entries.get(line.key);
    // Latest line wins, unless it carries an older revision (a duplicate re-appended after a
    // concurrent compaction can land after a newer line).
    if (current !== undefined && current.summary.revision > line.summary.revision) return;
    this.entries.set(line.key, toIndexedRun(line.summary));
    this.#sorted = undefined;
  }

  /** Forgets everything: the next sync reads the file from the start. */
  reset(): void {
    this.entries.clear();
    this.#sorted = undefined;
    this.offset = 0;
    this.lines = 0;
    this.ino = -1;
    this.loaded = false;
  }
}
