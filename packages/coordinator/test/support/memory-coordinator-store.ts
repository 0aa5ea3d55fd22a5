import { AsyncResource } from 'node:async_hooks';
import { AppError, ErrorCode, type RunStatus } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import type { CoordinatorStore, RootScope } from '../../src/server/coordinator-store.js';

const keyOf = (ref: RunRef, root: RunRef = ref): string =>
  `${root.name}/${root.dagRunId}/${ref.name}/${ref.dagRunId}`;

/**
 * The coordinator's store port in memory, for unit tests: records by root and run, and saves
 * that fail on demand (`failSaves(n)`: the next n saves reject, as a full disk would).
 */
export class MemoryCoordinatorStore implements CoordinatorStore {
  readonly records = new Map<string, DagRunRecord>();
  /** Every save attempted, failed ones included (copies). */
  readonly saves: DagRunRecord[] = [];
  #failing = 0;

  /** The next `n` saves reject with "disk full". */
  failSaves(n: number): void {
    this.#failing = n;
  }

  put(record: DagRunRecord): void {
    this.records.set(keyOf(record, record.root), structuredClone(record));
  }

  /** The stored record (a copy), or undefined. */
  peek(ref: RunRef, root: RunRef = ref): DagRunRecord | undefined {
    const r = this.records.get(keyOf(ref, root));
    return r && structuredClone(r);
  }

  getRun(ref: RunRef, opts: RootScope = {}): Promise<DagRunRecord> {
    const r = this.peek(ref, opts.root);
    if (!r)
      return Promise.reject(
        new AppError(ErrorCode.NotFound, `run ${ref.name}/${ref.dagRunId} not found`),
      );
    return Promise.resolve(r);
  }

  saveRun(record: DagRunRecord): Promise<void> {
    this.saves.push(structuredClone(record));
    if (this.#failing > 0) {
      this.#failing--;
      return Promise.reject(new Error('disk full'));
    }
    this.put(record);
    return Promise.resolve();
  }

  /** `saveRun` only while the stored revision is `expectRevision`. */
  async saveRunIf(record: DagRunRecord, expectRevision: number): Promise<boolean> {
    if (this.peek(record, record.root)?.revision !== expectRevision) return false;
    await this.saveRun(record);
    return true;
  }

  createRun(record: DagRunRecord): Promise<void> {
    this.put(record);
    return Promise.resolve();
  }

  listRuns(filter: { readonly status?: RunStatus }): Promise<DagRunRecord[]> {
    return Promise.resolve(
      [...this.records.values()].filter(
        (r) => filter.status === undefined || r.status === filter.status,
      ),
    );
  }

  /** Stop watchers by run key, each run in the async context it was registered in (a timer's). */
  readonly #stopWatchers = new Map<string, () => void>();

  watchStop(ref: RunRef, opts: RootScope, onStop: () => void): () => void {
    const key = keyOf(ref, opts.root);
    this.#stopWatchers.set(key, AsyncResource.bind(onStop));
    return () => void this.#stopWatchers.delete(key);
  }

  /** A stop request of the run: its watcher, if any, is told. */
  requestStop(ref: RunRef, root: RunRef = ref): void {
    this.#stopWatchers.get(keyOf(ref, root))?.();
  }
}
