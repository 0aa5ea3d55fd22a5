import { newestFirst, toIndexedRun, type IndexedRun } from '../runs/run-filter.js';
import { sameSummaryFields, type RunSummary } from '../runs/run-summary.js';
import type { IndexLine } from './index-line.js';

type RunOwner = NonNullable<RunSummary['owner']>;

/** How many distinct owners {@link IndexState} shares at most (one per process start). */
const OWNERS_KEPT = 256;

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
  /** Owners by their fields, so a process's runs share one object (see `apply`). */
  readonly #owners = new Map<string, RunOwner>();

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
    this.entries.set(line.key, toIndexedRun(this.#shareParts(line.summary)));
    this.#sorted = undefined;
  }

  /**
   * `summary` with the parts many runs hold equal in one copy (a heap snapshot at 9,000 runs:
   * each parsed line had its own owner object and `processStart` string, and a second copy of
   * the run's id in `root`): ~140 B of the ~750 B a run costs. Sharing is safe because a
   * summary is never changed in place, only replaced when its run changes (the rule
   * packages/api/src/wire/run-summary-json.ts relies on to cache each summary's JSON text), and a
   * `RunOwner`'s fields are readonly (packages/spec/src/model/run.ts). Only a root of exactly
   * `name` and `dagRunId` is rebuilt from the run's own: one with anything more stays whole.
   */
  #shareParts(summary: RunSummary): RunSummary {
    const { root, owner } = summary;
    const topLevel =
      root.name === summary.name &&
      root.dagRunId === summary.dagRunId &&
      Object.keys(root).length === 2;
    const startedAt =
      summary.startedAt === summary.createdAt ? summary.createdAt : summary.startedAt;
    return {
      ...summary,
      root: topLevel ? { name: summary.name, dagRunId: summary.dagRunId } : root,
      startedAt,
      ...(owner === undefined ? {} : { owner: this.#sharedOwner(owner) }),
    };
  }

  #sharedOwner(owner: RunOwner): RunOwner {
    const key = JSON.stringify(owner);
    const known = this.#owners.get(key);
    if (known !== undefined) return known;
    // a new owner per process start: a bound against a history of very many restarts
    if (this.#owners.size >= OWNERS_KEPT) this.#owners.clear();
    this.#owners.set(key, owner);
    return owner;
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
