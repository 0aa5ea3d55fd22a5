/** Tells listeners that worker capacity may have grown (a worker joined, a run ended). */
export class CapacitySignal {
  readonly #listeners = new Set<() => void>();
  readonly #warn: (message: string) => void;

  constructor(warn: (message: string) => void) {
    this.#warn = warn;
  }

  /** Calls `listener` on every change. Returns a disposer. */
  on(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Calls every listener; one that throws is reported and the others still run. */
  changed(): void {
    for (const l of this.#listeners) {
      try {
        l();
      } catch (e) {
        this.#warn(`capacity listener failed: ${(e as Error).message}`);
      }
    }
  }
}
