import type { Clock } from '@trellis/core';
import { DagIndex } from '../index-file/dag-index.js';
import type { StoreLayout } from '../layout/store-layout.js';
import { runDirNames, scanDagSummaries } from './scan-dag-runs.js';

/** What `DagIndexes` needs from the store. */
export interface DagIndexesDeps {
  readonly layout: StoreLayout;
  readonly clock: Clock;
  readonly warn: (message: string) => void;
  /** Compact a DAG's index when it holds more than this many lines per live run. */
  readonly compactFactor: number;
}

/** The store's per-DAG indexes, each made on first use and kept, and the DAGs with runs. */
export class DagIndexes {
  readonly #deps: DagIndexesDeps;
  readonly #indexes = new Map<string, DagIndex>();
  /** The last listing of `runs/` and when it was read (performance.now()). */
  #names: { readonly list: readonly string[]; readonly at: number } | undefined;

  constructor(deps: DagIndexesDeps) {
    this.#deps = deps;
  }

  /** The index of a DAG (its own runs and the children stored under them). */
  of(dagName: string): DagIndex {
    let index = this.#indexes.get(dagName);
    if (index === undefined) {
      const { layout, clock, warn } = this.#deps;
      const dagDir = layout.dagDir(dagName);
      index = new DagIndex({
        path: layout.indexPath(dagName),
        scan: () => scanDagSummaries(dagDir, dagName, warn),
        warn,
        compactFactor: this.#deps.compactFactor,
        compactMinLines: 64,
        lockStaleMs: 60_000,
        now: () => clock.now(),
      });
      this.#indexes.set(dagName, index);
    }
    return index;
  }

  /**
   * DAG folders under `runs/` (dot-names are not DAGs). With `maxStaleMs`, the folder is not read
   * again when it was read that recently: the DAGs this process has written since are added from
   * its indexes (another process's new DAG shows within `maxStaleMs`).
   */
  async dagNames(maxStaleMs = 0): Promise<string[]> {
    const now = performance.now();
    if (this.#names === undefined || now - this.#names.at >= maxStaleMs) {
      this.#names = { list: (await runDirNames(this.#deps.layout.runsDir)) ?? [], at: now };
      return [...this.#names.list];
    }
    return [...new Set([...this.#names.list, ...this.#indexes.keys()])];
  }
}
