import { setMaxListeners } from 'node:events';
import type { Clock } from '@trellis/core';

/**
 * A phase controller. Every concurrent step execution listens on its signal and removes its
 * listener when it ends, so the default limit of 10 listeners would warn falsely.
 */
const newPhase = (): AbortController => {
  const c = new AbortController();
  setMaxListeners(0, c.signal);
  return c;
};

/** The run's stop and timeout: what ended its steps, and the signal they listen to. */
export class StopControl {
  /** Aborted by stop or timeout; every step execution of the current phase listens to it. */
  private phase = newPhase();
  private readonly timer = new AbortController();
  private stopRequested = false;
  private timeoutReached = false;

  /** The current phase's signal (the steps', then the handlers'). */
  get signal(): AbortSignal {
    return this.phase.signal;
  }

  /** The current phase was stopped or timed out. */
  get aborted(): boolean {
    return this.phase.signal.aborted;
  }

  get stopping(): boolean {
    return this.stopRequested;
  }

  get timedOut(): boolean {
    return this.timeoutReached;
  }

  /** The error of a step that the abort ended. */
  get reason(): string {
    return this.timeoutReached ? 'run timed out' : 'stopped';
  }

  /** Stops the run once: running steps get their stop signal. */
  stop(log: (line: string) => void): void {
    if (this.stopRequested) return;
    this.stopRequested = true;
    log('stop requested: signalling running steps');
    this.phase.abort(new Error('stopped'));
  }

  /** Times the run out after `timeoutSec` (0 or less: never); `onTimeout` runs before the abort. */
  armTimeout(clock: Clock, timeoutSec: number, onTimeout: () => void): void {
    if (timeoutSec <= 0) return;
    clock
      .sleep(timeoutSec * 1000, this.timer.signal)
      .then(() => {
        this.timeoutReached = true;
        onTimeout();
        this.phase.abort(new Error('timeout'));
      })
      .catch(() => undefined); // cancelled at the end of the run
  }

  /** The steps are over: the timeout can no longer fire. */
  disarm(): void {
    this.timer.abort();
  }

  /**
   * Handlers get a fresh phase: a timeout or stop of the steps does not stop the clean-up.
   * `stop` is the caller's stop signal.
   */
  startHandlerPhase(stop: AbortSignal | undefined): void {
    this.phase = newPhase();
    if (this.stopRequested && stop?.aborted) {
      // a second stop during handlers ends them
      stop.addEventListener('abort', () => this.phase.abort(new Error('stopped')), {
        once: true,
      });
    }
  }
}
