import type { DagRunRecord, RunRef } from '@trellis/spec';

/** The key of a top-level run in admission's books. */
export const refKey = (r: RunRef): string => `${r.name}/${r.dagRunId}`;

/** Callers waiting for runs to end, by run: resolved by the one run-end event. */
export class RunWaiters {
  readonly #waiters = new Map<string, ((r: DagRunRecord) => void)[]>();

  /** A promise of the run's final record, resolved when it ends here or on a worker. */
  waitFor(ref: RunRef): Promise<DagRunRecord> {
    const key = refKey(ref);
    return new Promise((resolve) => {
      const list = this.#waiters.get(key) ?? [];
      list.push(resolve);
      this.#waiters.set(key, list);
    });
  }

  /** Resolves the waiters of a run that reached a final status. */
  settle(record: DagRunRecord): void {
    const key = refKey(record);
    const list = this.#waiters.get(key);
    if (!list) return;
    this.#waiters.delete(key);
    for (const resolve of list) resolve(record);
  }
}
