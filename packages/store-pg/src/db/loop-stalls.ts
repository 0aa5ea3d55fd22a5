/** How often the stall timer ticks. */
const TICK_MS = 250;
/** A gap between two ticks longer than this is a stall (the process did not run). */
export const STALL_MS = 1000;
/** Stalls remembered (the oldest are dropped). */
const KEPT = 32;

interface Stall {
  readonly from: number;
  readonly to: number;
}

/**
 * When this process did not run: frozen (SIGSTOP, a paused container or VM) or its event loop
 * blocked. A timer (unref'd: it keeps no process alive) ticks every `TICK_MS`; a gap between two
 * ticks longer than `STALL_MS` is noted, on the monotonic clock (`performance.now()`, which runs
 * on while the process is frozen, as the timers' clock does).
 *
 * Why: a timer due while the process was frozen fires as soon as it resumes, in the timers phase,
 * before the poll phase reads the sockets whose answers arrived meanwhile. So the pool's connect
 * timer fails a connection the server had long accepted (docs/decisions.md, "A store call
 * waiting for a connection while the process was frozen").
 */
export class LoopStalls {
  readonly #now: () => number;
  #last: number;
  readonly #stalls: Stall[] = [];

  /** `now` and `every` (how the tick is called) are the monotonic clock and an unref'd interval. */
  constructor(opts: { now?: () => number; every?: (tick: () => void) => void } = {}) {
    this.#now = opts.now ?? (() => performance.now());
    this.#last = this.#now();
    const every = opts.every ?? ((tick) => void setInterval(tick, TICK_MS).unref());
    every(() => this.#tick());
  }

  #tick(): void {
    const now = this.#now();
    if (now - this.#last > STALL_MS) {
      this.#stalls.push({ from: this.#last, to: now });
      if (this.#stalls.length > KEPT) this.#stalls.shift();
    }
    this.#last = now;
  }

  /**
   * Milliseconds of `[from, to]` (`performance.now()` times) the process did not run, as far as
   * the ticks tell: the span's overlap with the stalls noted. A stall still going on (the timer
   * that would note it has not run yet) is not counted: call this from a later phase of the
   * event loop than the timer that woke the caller (after `setImmediate`).
   */
  stalledWithin(from: number, to: number): number {
    let stalled = 0;
    for (const s of this.#stalls)
      stalled += Math.max(0, Math.min(to, s.to) - Math.max(from, s.from));
    return stalled;
  }

  /** Milliseconds of `[from, to]` the process ran: the span less {@link stalledWithin}. */
  ranWithin(from: number, to: number): number {
    return to - from - this.stalledWithin(from, to);
  }
}

/** What `PgDb` asks of the stall timer (a test gives its own). */
export type StallSource = Pick<LoopStalls, 'ranWithin' | 'stalledWithin'>;

let shared: LoopStalls | undefined;

/** The process's one stall timer, started on first use. */
export const loopStalls = (): LoopStalls => (shared ??= new LoopStalls());
