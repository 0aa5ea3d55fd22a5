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

  /** DAG folders under `runs/` (dot-names are not DAGs). */
  async dagNames(): Promise<string[]> {
    return (await runDirNames(this.#deps.layout.runsDir)) ?? [];
  }
}
