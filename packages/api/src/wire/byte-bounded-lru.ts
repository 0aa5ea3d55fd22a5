/**
 * Entries by key, bounded in number and in bytes (as `cost` counts them), the least recently
 * used going first: the kept bodies of the listing routes (listing-body-cache.ts,
 * dag-runs-body.ts). An entry over the whole byte budget is never kept.
 */
export class ByteBoundedLru<V> {
  readonly #entries = new Map<string, V>();
  #bytes = 0;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #cost: (key: string, value: V) => number;

  constructor(maxEntries: number, maxBytes: number, cost: (key: string, value: V) => number) {
    this.#maxEntries = maxEntries;
    this.#maxBytes = maxBytes;
    this.#cost = cost;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The entry of `key`, without making it the most recent. */
  peek(key: string): V | undefined {
    return this.#entries.get(key);
  }

  /** Removes the entry of `key` and returns it (to be `set` again, as the most recent, or not). */
  take(key: string): V | undefined {
    const v = this.#entries.get(key);
    if (v === undefined) return undefined;
    this.#entries.delete(key);
    this.#bytes -= this.#cost(key, v);
    return v;
  }

  /** Keeps `value` under `key` as the most recent (unless it is over the budget by itself). */
  set(key: string, value: V): void {
    this.take(key);
    const cost = this.#cost(key, value);
    if (cost > this.#maxBytes) return;
    this.#entries.set(key, value);
    this.#bytes += cost;
    for (const [k, e] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      this.#entries.delete(k);
      this.#bytes -= this.#cost(k, e);
    }
  }
}
