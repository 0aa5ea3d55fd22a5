import { RunStatus } from '@trellis/core';
import type { IndexedRun } from '../runs/run-filter.js';
import { sameSummaryFields, type RunSummary } from '../runs/run-summary.js';
import { IndexAppender } from './index-appender.js';
import { maybeCompact, type CompactionDeps } from './index-compaction.js';
import { encodeIndexLine, keyOfSummary, type IndexLine } from './index-line.js';
import { IndexState } from './index-state.js';
import { syncIndex } from './index-sync.js';

/** What a `DagIndex` needs from the store. */
export interface DagIndexDeps {
  /** Path of this DAG's `index.jsonl`. */
  readonly path: string;
  /** Reads every status file of the DAG (children included); undefined when the DAG has no folder. */
  readonly scan: () => Promise<RunSummary[] | undefined>;
  readonly warn: (message: string) => void;
  /** Compact when the file holds more than this many lines per live run. */
  readonly compactFactor: number;
  /** Never compact a file of fewer lines than this. */
  readonly compactMinLines: number;
  /** Age after which another process's compaction lock counts as abandoned, in ms. */
  readonly lockStaleMs: number;
  readonly now: () => Date;
}

/**
 * The in-memory view of one DAG's append-only `index.jsonl` (one summary line per change; the
 * line with the highest revision per key wins; `del` lines remove a key). Loaded lazily; before
 * every answer it checks the file and reads only the bytes appended since (by this or another
 * process sharing the store). Rebuilt from the status files when missing or unreadable, and
 * compacted when it holds more than `compactFactor` lines per live run.
 *
 * Every method runs after the previous one finished (a promise chain), so a sync never sees a
 * half-applied append of this process.
 */
export class DagIndex {
  readonly #deps: DagIndexDeps;
  readonly #state = new IndexState();
  readonly #appender: IndexAppender;
  readonly #compaction: CompactionDeps;
  #chain: Promise<void> = Promise.resolve();
  /** Tasks queued or running on the chain. */
  #busy = 0;
  /** When the file was last read up to its end (performance.now()); -Infinity before. */
  #syncedAt = -Infinity;
  /** Puts waiting for the next write (group commit). */
  readonly #pending: { summary: RunSummary; resolve: () => void; reject: (e: unknown) => void }[] =
    [];

  constructor(deps: DagIndexDeps) {
    this.#deps = deps;
    this.#appender = new IndexAppender({
      path: deps.path,
      state: this.#state,
      warn: deps.warn,
      serial: (task) => this.#serial(task),
    });
    this.#compaction = {
      ...deps,
      state: this.#state,
      appender: this.#appender,
      sync: () => this.#sync(),
    };
  }

  /**
   * Every indexed run (children included), newest first, after reading new lines; with
   * `maxStaleMs`, the file is not looked at when it was read that recently (this process's own
   * writes are in memory at once; another process's show within `maxStaleMs`).
   */
  entries(maxStaleMs = 0): Promise<readonly IndexedRun[]> {
    return this.#serial(async () => {
      if (performance.now() - this.#syncedAt >= maxStaleMs) await this.#sync();
      return this.#state.newestFirst();
    });
  }

  /**
   * What `entries(maxStaleMs)` would answer, at once, when nothing is queued on this index and
   * the file was read less than `maxStaleMs` ago; else undefined (call `entries`). Listing 1,000
   * DAGs' runs then takes no turn of 1,000 promise chains.
   */
  fresh(maxStaleMs: number): readonly IndexedRun[] | undefined {
    if (this.#busy > 0 || performance.now() - this.#syncedAt >= maxStaleMs) return undefined;
    return this.#state.newestFirst();
  }

  /** The indexed summary of one key, after reading new lines. */
  get(key: string): Promise<RunSummary | undefined> {
    return this.#serial(async () => {
      await this.#sync();
      return this.#state.entries.get(key)?.summary;
    });
  }

  /**
   * Records `summary` unless the index already holds the same fields (revision aside). Puts that
   * arrive while a write is in flight are written together in the next one (group commit), so
   * many runs of one DAG finishing at once cost one append, not one each.
   */
  put(summary: RunSummary): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ summary, resolve, reject });
      if (this.#pending.length === 1) void this.#serial(() => this.#flushPuts());
    });
  }

  /** Removes runs from the index (a deleted run and its children). */
  remove(keys: readonly string[]): Promise<void> {
    return this.#serial(async () => {
      await this.#sync();
      const present = keys.filter((k) => this.#state.entries.has(k));
      if (present.length === 0) return;
      const lines = present.map((key): IndexLine => ({ kind: 'del', key }));
      await this.#appender.append(lines.map(encodeIndexLine).join(''), lines.length);
      lines.forEach((l) => this.#state.apply(l));
      await maybeCompact(this.#compaction);
    });
  }

  async #flushPuts(): Promise<void> {
    const batch = this.#pending.splice(0);
    const state = this.#state;
    try {
      const latest = new Map<string, RunSummary>();
      for (const { summary } of batch) latest.set(keyOfSummary(summary), summary);
      // Nothing new to say (a save that changed no summary field): no need to read the file.
      if (state.loaded && [...latest].every(([key, s]) => state.holds(key, s))) {
        batch.forEach((p) => p.resolve());
        return;
      }
      await this.#sync();
      const lines: IndexLine[] = [];
      for (const [key, summary] of latest) {
        const current = state.entries.get(key)?.summary;
        if (current !== undefined && sameSummaryFields(current, summary)) continue;
        if (current !== undefined && current.revision > summary.revision) continue;
        lines.push({ kind: 'put', key, summary });
      }
      if (lines.length > 0) {
        // Synced to disk when a line records a state its record also syncs (queued, final).
        const durable = lines.some(
          (l) =>
            l.kind === 'put' &&
            l.summary.status !== RunStatus.Running &&
            l.summary.status !== RunStatus.NotStarted,
        );
        await this.#appender.append(lines.map(encodeIndexLine).join(''), lines.length, durable);
        lines.forEach((l) => state.apply(l));
        await maybeCompact(this.#compaction);
      }
      batch.forEach((p) => p.resolve());
    } catch (e) {
      batch.forEach((p) => p.reject(e));
    }
  }

  #serial<T>(task: () => Promise<T>): Promise<T> {
    this.#busy++;
    const result = this.#chain.then(task);
    this.#chain = result.then(
      () => {
        this.#busy--;
      },
      () => {
        this.#busy--;
      },
    );
    return result;
  }

  async #sync(): Promise<void> {
    const at = performance.now();
    await syncIndex(this.#state, this.#deps);
    this.#syncedAt = at;
  }
}
