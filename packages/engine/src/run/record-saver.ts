import type { Clock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import type { RunRecorder } from '../ports/recorder.js';

/** How a run's record is saved: where to, and how often. */
export interface RecordSaverDeps {
  readonly recorder: RunRecorder;
  readonly clock: Clock;
  /** `EngineDeps.recordSaveWindowMs`; 0 saves each change at the end of its turn. */
  readonly windowMs: number;
  readonly log: (line: string) => void;
}

/**
 * A window at least this many times the last save's duration: saving a large record never takes
 * more than about a fifth of the run's time, whatever its size.
 */
const WINDOW_PER_SAVE_MS = 4;

/**
 * The longest window (unless `windowMs` is longer): a slow save under load, or a wall-clock step
 * during one, must not hold the next saves for seconds or minutes.
 */
export const WINDOW_CAP_MS = 1000;

/**
 * Saves the run's record. Saves are coalesced: while one is being written, later changes mark the
 * record dirty and one more save follows with the latest state, so the store never falls behind
 * and the last save always holds the final state. A `persist` starts its save at the end of the
 * current event-loop turn (setImmediate), so the changes of one turn make one save: a step marked
 * running and then given its process id is saved once, not twice.
 *
 * With a window (`windowMs` > 0), a `persist` also waits until the window since the last save
 * began has passed (the window is at least {@link WINDOW_PER_SAVE_MS} times the last save's
 * duration, at most {@link WINDOW_CAP_MS} or `windowMs` if longer, whatever the clock does), so
 * the changes of node states in that window make one save: a record of n nodes is written about
 * once per window instead of twice per step, which made a run's saves O(n^2) (docs/decisions.md,
 * "Per-step cost"). `persistNow` (a run's start and its final status) saves at once, taking along
 * whatever waited; a change made while it waits is saved right after it, with no window.
 */
export class RecordSaver {
  private saving: Promise<void> | undefined;
  private dirty = false;
  /** A `persistNow` is waiting: no window. */
  #urgent = false;
  /** How many `persistNow` calls wait for the saves in progress: no window for those either. */
  #waitingNow = 0;
  /** Ends the window being waited, for a `persistNow`. */
  #cut: AbortController | undefined;
  /**
   * When the last save began and how long it took (clock ms). The first window starts with the
   * saver: the record was just stored (created, activated, claimed), so a short run's first step
   * is saved with the run's end instead of once more on its own.
   */
  #lastAt: number;
  #lastMs = 0;

  constructor(
    private readonly record: DagRunRecord,
    private readonly deps: RecordSaverDeps,
  ) {
    this.#lastAt = deps.clock.now().getTime();
  }

  /** A new revision of the record, saved at the end of this event-loop turn (or window). */
  persist(): void {
    this.#change(true);
  }

  /** A new revision of the record, resolved once it and every earlier one are saved. */
  async persistNow(): Promise<void> {
    this.#urgent = true;
    this.#cut?.abort();
    this.#change(false);
    // the saves that follow (a `persist` during this one) wait for no window either
    this.#waitingNow++;
    try {
      while (this.saving) await this.saving;
    } finally {
      this.#waitingNow--;
    }
  }

  #change(soon: boolean): void {
    this.record.revision++;
    if (this.saving) {
      this.dirty = true;
      return;
    }
    this.saving = this.flush(soon);
  }

  private async flush(soon: boolean): Promise<void> {
    if (soon) await new Promise<void>((resolve) => setImmediate(resolve));
    do {
      await this.#window();
      this.dirty = false;
      this.#urgent = false;
      const at = this.deps.clock.now().getTime();
      try {
        // The recorder serialises the record during the call (RunRecorder.save), so no copy.
        await this.deps.recorder.save(this.record);
      } catch (e) {
        this.deps.log(`could not save the run record: ${(e as Error).message}`);
      }
      this.#lastAt = at;
      this.#lastMs = this.deps.clock.now().getTime() - at;
    } while (this.dirty);
    this.saving = undefined;
  }

  /** Waits until the window since the last save has passed, unless a `persistNow` came. */
  async #window(): Promise<void> {
    if (this.deps.windowMs <= 0 || this.#urgent || this.#waitingNow > 0) return;
    const capMs = Math.max(this.deps.windowMs, WINDOW_CAP_MS);
    const windowMs = clamp(WINDOW_PER_SAVE_MS * this.#lastMs, this.deps.windowMs, capMs);
    // clamped: the clock is the wall clock, which may step back (a longer wait) or forward
    const waitMs = Math.min(this.#lastAt + windowMs - this.deps.clock.now().getTime(), windowMs);
    if (waitMs <= 0) return;
    this.#cut = new AbortController();
    await this.deps.clock.sleep(waitMs, this.#cut.signal).catch(() => undefined);
    this.#cut = undefined;
  }
}

const clamp = (v: number, min: number, max: number): number => Math.min(Math.max(v, min), max);
