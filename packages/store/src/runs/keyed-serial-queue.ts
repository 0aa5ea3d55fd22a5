/**
 * Runs tasks one at a time per key, in call order (a promise chain per key). A failing task
 * rejects its own caller only; the next task of the key still runs. Keys with nothing pending
 * are forgotten, so the map does not grow with history.
 */
export class KeyedSerialQueue {
  readonly #tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    const result = prev.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Number of keys with a task pending or running (for tests). */
  get activeKeys(): number {
    return this.#tails.size;
  }
}
