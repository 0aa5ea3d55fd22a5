import type { Clock } from '@trellis/core';

/**
 * One log line when deliveries start failing and one when the messages held up by the outage
 * were delivered (with how many), however many retries happen in between.
 */
export class OutageLog {
  readonly #log: (line: string) => void;
  readonly #clock: Clock;
  #since: Date | undefined;
  /** Messages up to this journal `n` were queued before deliveries worked again. */
  #backlogUpTo: number | undefined;
  #delivered = 0;

  constructor(log: (line: string) => void, clock: Clock) {
    this.#log = log;
    this.#clock = clock;
  }

  /** True from the first failure until the backlog was delivered. */
  get active(): boolean {
    return this.#since !== undefined;
  }

  /** A delivery failed and will be retried. */
  failed(reason: string): void {
    this.#backlogUpTo = undefined;
    if (this.#since) return;
    this.#since = this.#clock.now();
    this.#delivered = 0;
    this.#log(
      `outbox: coordinator unreachable (${reason}): runs go on; their status and logs are kept and retried`,
    );
  }

  /** `count` messages were delivered; `lastN` is the newest message queued now. */
  delivered(count: number, lastN: number): void {
    if (!this.#since) return;
    this.#delivered += count;
    this.#backlogUpTo ??= lastN;
  }

  /** Ends the outage once no message queued before the recovery is left (`oldestN`: none). */
  settle(oldestN: number | undefined): void {
    const upTo = this.#backlogUpTo;
    if (!this.#since || upTo === undefined || (oldestN !== undefined && oldestN <= upTo)) return;
    const secs = Math.round((this.#clock.now().getTime() - this.#since.getTime()) / 1000);
    this.#log(
      `outbox: coordinator reachable again after ${secs} s: ${this.#delivered} buffered message(s) delivered`,
    );
    this.#since = undefined;
  }
}
