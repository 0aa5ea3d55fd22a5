import { describe, expect, it } from 'vitest';
import type { DagRunRecord } from '@trellis/spec';
import { asLeader, withLeaderSwaps } from './leader-scope.js';
import type { RuntimeStore } from './runtime-store.js';

/** A store that records which of its swaps were called; only what the routing touches. */
class FakeStore {
  readonly swaps: string[] = [];
  readonly #name: string;
  constructor(name: string) {
    this.#name = name;
  }
  saveRunIf(record: DagRunRecord): Promise<boolean> {
    this.swaps.push(`${this.#name}:${record.dagRunId}`);
    return Promise.resolve(this.#name !== 'refusing');
  }
  /** Reads its private field: called on the proxy, it must still see the store as `this`. */
  whoAmI(): string {
    return this.#name;
  }
}

const rec = (id: string): DagRunRecord => ({ dagRunId: id }) as DagRunRecord;

describe('withLeaderSwaps', () => {
  it("routes a queue pass's swaps to the leader's fenced store, every other call to the store", async () => {
    const plain = new FakeStore('plain');
    const fenced = new FakeStore('refusing');
    const store = withLeaderSwaps(plain as unknown as RuntimeStore);
    expect(await store.saveRunIf(rec('api'), 0)).toBe(true);
    // the pass's work, including what it awaits and what it starts without awaiting
    const pass = asLeader(fenced as unknown as RuntimeStore, async () => {
      const first = await store.saveRunIf(rec('handed-on'), 0);
      await Promise.resolve();
      const later = new Promise<boolean>((r) =>
        setImmediate(() => void store.saveRunIf(rec('failed-queued'), 0).then(r)),
      );
      return [first, await later];
    });
    expect(await pass).toEqual([false, false]);
    expect(await store.saveRunIf(rec('after'), 0)).toBe(true);
    expect(plain.swaps).toEqual(['plain:api', 'plain:after']);
    expect(fenced.swaps).toEqual(['refusing:handed-on', 'refusing:failed-queued']);
    expect((store as unknown as FakeStore).whoAmI()).toBe('plain');
  });
});
