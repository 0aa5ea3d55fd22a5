/** Callers of `Outbox.whenSent`, by run key: woken once the run's lane emptied. */
export class SentWaiters {
  readonly #byRun = new Map<string, (() => void)[]>();

  /** Resolves at the next {@link sent} of `runKey`. */
  wait(runKey: string): Promise<void> {
    return new Promise((resolve) => {
      const waiting = this.#byRun.get(runKey);
      if (waiting) waiting.push(resolve);
      else this.#byRun.set(runKey, [resolve]);
    });
  }

  /** Everything queued for `runKey` was delivered (or refused, or dropped). */
  sent(runKey: string): void {
    for (const r of this.#byRun.get(runKey) ?? []) r();
    this.#byRun.delete(runKey);
  }
}
