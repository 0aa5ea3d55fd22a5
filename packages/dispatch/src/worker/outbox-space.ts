/** A producer waiting for room, with what it adds once there is. */
interface Waiter {
  readonly runKey: string;
  readonly take: () => void;
  readonly resolve: () => void;
}

/**
 * The outbox's size bound: step output is back-pressured at the limit, never dropped. A producer
 * whose message does not fit waits (first come, first served) until delivered messages free room;
 * a message is always taken when the outbox is empty, so one larger than the limit still goes.
 */
export class OutboxSpace {
  readonly #maxBytes: number;
  readonly #used: () => number;
  readonly #waiters: Waiter[] = [];
  #bounded = true;

  /** `used()` tells the bytes held now. */
  constructor(maxBytes: number, used: () => number) {
    this.#maxBytes = maxBytes;
    this.#used = used;
  }

  /** Producers waiting for room now. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** Runs `take` at once when there is room and nobody waits, else once there is; then resolves. */
  whenRoom(runKey: string, take: () => void): Promise<void> {
    if (this.#waiters.length === 0 && this.#hasRoom()) {
      take();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push({ runKey, take, resolve }));
  }

  /** Lets waiting producers in, in order, while there is room (call after bytes were freed). */
  freed(): void {
    while (this.#waiters.length > 0 && this.#hasRoom()) {
      const w = this.#waiters.shift();
      w?.take();
      w?.resolve();
    }
  }

  /** Lets the producers of a run go without adding their messages (the run was dropped). */
  release(runKey: string): void {
    for (let i = this.#waiters.length - 1; i >= 0; i--) {
      const w = this.#waiters[i];
      if (w?.runKey !== runKey) continue;
      this.#waiters.splice(i, 1);
      w.resolve();
    }
  }

  /**
   * From now on nothing waits (a stopping worker: its runs are being stopped and must end; what
   * they still write goes into the journal, delivered after the next start).
   */
  unbound(): void {
    this.#bounded = false;
    this.freed();
  }

  #hasRoom(): boolean {
    const used = this.#used();
    return !this.#bounded || used === 0 || used < this.#maxBytes;
  }
}
