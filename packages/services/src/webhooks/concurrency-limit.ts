/** At most `max` holders at once; the others wait in arrival order. */
export class ConcurrencyLimit {
  #active = 0;
  readonly #waiters: (() => void)[] = [];

  constructor(private readonly max: number) {}

  /** Resolves once a slot is held; rejects with the signal's reason when aborted first. */
  acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    if (this.#active < this.max) {
      this.#active++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const granted = (): void => {
        signal.removeEventListener('abort', aborted);
        this.#active++;
        resolve();
      };
      const aborted = (): void => {
        const i = this.#waiters.indexOf(granted);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', aborted, { once: true });
      this.#waiters.push(granted);
    });
  }

  release(): void {
    this.#active--;
    this.#waiters.shift()?.();
  }
}
