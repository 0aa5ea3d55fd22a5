import type { Clock } from '@trellis/core';

interface Timer {
  readonly due: number;
  readonly seq: number;
  readonly ms: number;
  readonly resolve: () => void;
}

/**
 * A clock for tests (docs/architecture.md, "House style"). Manual mode: `sleep` waits until `advanceBy`/`setTime`
 * passes its due time; timers fire in due order. Auto mode (`autoAdvance: true`): each `sleep`
 * moves time forward by its duration and resolves at once, so retry and repeat waits cost no real
 * time while their durations stay visible in `sleeps`.
 */
export class FakeClock implements Clock {
  private nowMs: number;
  private seq = 0;
  private timers: Timer[] = [];
  /** Every duration passed to `sleep`, in call order (ms). */
  readonly sleeps: number[] = [];
  private readonly waiters: ((ms: number) => void)[] = [];

  constructor(
    start: string | number = '2026-01-02T03:04:05.000Z',
    private readonly opts: { autoAdvance?: boolean } = {},
  ) {
    this.nowMs = typeof start === 'number' ? start : Date.parse(start);
  }

  now(): Date {
    return new Date(this.nowMs);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    for (const w of this.waiters.splice(0)) w(ms);
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (this.opts.autoAdvance) {
      this.nowMs += Math.max(0, ms);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.timers = this.timers.filter((t) => t !== timer);
        reject(signal?.reason as Error);
      };
      const timer: Timer = {
        due: this.nowMs + Math.max(0, ms),
        seq: this.seq++,
        ms,
        // as the system clock does: a sleep that ended leaves no listener on the signal
        resolve: () => (signal?.removeEventListener('abort', onAbort), resolve()),
      };
      this.timers.push(timer);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Resolves with the duration of the next `sleep` call (or one already pending, first). */
  nextSleep(): Promise<number> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Timers waiting right now. */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves time forward, firing due timers in order, and lets their continuations run. */
  async advanceBy(ms: number): Promise<void> {
    await this.setTimeMs(this.nowMs + ms);
  }

  /** Sets the wall clock to `iso`, backwards too (a clock correction); fires no timers. */
  jumpTo(iso: string): void {
    this.nowMs = Date.parse(iso);
  }

  async setTime(iso: string): Promise<void> {
    await this.setTimeMs(Date.parse(iso));
  }

  private async setTimeMs(target: number): Promise<void> {
    for (;;) {
      const due = this.timers
        .filter((t) => t.due <= target)
        .sort((a, b) => a.due - b.due || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.nowMs = Math.max(this.nowMs, due.due);
      due.resolve();
      await flushMicrotasks();
    }
    this.nowMs = Math.max(this.nowMs, target);
    await flushMicrotasks();
  }
}

/** Lets pending promise continuations run. */
export const flushMicrotasks = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};
