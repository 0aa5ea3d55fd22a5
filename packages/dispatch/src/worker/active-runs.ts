import type { RunningTaskMsg } from '@trellis/coordinator/client';
import type { RunRef } from '@trellis/spec';

/** A run executing on this worker (top-level or child), as heartbeats report it. */
export interface ActiveRun {
  readonly ref: RunRef;
  readonly root: RunRef;
  readonly parent: RunRef | undefined;
  readonly startedAt: string;
  readonly stop: AbortController;
  dropped: boolean;
}

/**
 * What a worker holds: the slots taken by runs it is claiming or executing (at most its
 * concurrency) and the runs executing now, children included, by hosted-run key. It is idle
 * once it holds neither. A run that ended is still listed (heartbeats tell it) until the
 * coordinator took its final report: a heartbeat that overtook that report would make the
 * coordinator think the worker lost the run (packages/coordinator/src/server/heartbeat-reconcile.ts).
 */
export class ActiveRuns {
  readonly #runs = new Map<string, ActiveRun>();
  /** Runs that ended, until their final report was delivered (`settled` then). */
  readonly #reporting = new Map<string, { run: ActiveRun; settled: Promise<void> }>();
  readonly #idle = new Set<() => void>();
  readonly #freed = new Set<() => void>();
  #slots = 0;

  /** Runs executing now (children included). */
  get size(): number {
    return this.#runs.size;
  }

  /** Slots taken (top-level runs being claimed or executed). */
  get slots(): number {
    return this.#slots;
  }

  takeSlot(): void {
    this.#slots++;
  }

  releaseSlot(): void {
    this.#slots--;
    this.#onFreed();
  }

  add(key: string, run: ActiveRun): void {
    this.#runs.set(key, run);
  }

  /** The run ended; it is listed until `delivered` (its final report) settles. */
  end(key: string, delivered: Promise<void>): void {
    const run = this.#runs.get(key);
    if (!run) return;
    this.#runs.delete(key);
    const done = (): void => {
      if (this.#reporting.get(key)?.run === run) this.#reporting.delete(key);
      this.#onFreed();
    };
    this.#reporting.set(key, { run, settled: delivered.then(done, done) });
  }

  /**
   * Resolves once the final reports of the runs that ended so far were delivered (runs ending
   * later do not hold it up), or at once when `signal` aborts; it leaves no listener behind.
   */
  whenReported(signal: AbortSignal): Promise<void> {
    const pending = [...this.#reporting.values()].map((r) => r.settled);
    if (pending.length === 0 || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      Promise.all(pending).then(done, done);
    });
  }

  /** Calls `listener` each time a run ends or a slot is released (the heartbeat tells it). */
  onFreed(listener: () => void): void {
    this.#freed.add(listener);
  }

  #onFreed(): void {
    for (const l of this.#freed) l();
  }

  get(key: string): ActiveRun | undefined {
    return this.#runs.get(key);
  }

  /** The runs executing now, with their keys. */
  entries(): IterableIterator<[string, ActiveRun]> {
    return this.#runs.entries();
  }

  /** The runs executing now and those whose final report is on its way, as heartbeats list them. */
  tasks(): RunningTaskMsg[] {
    const ended = [...this.#reporting.values()].map((r) => r.run);
    return [...this.#runs.values(), ...ended].map((r) => ({
      run: { name: r.ref.name, dagRunId: r.ref.dagRunId },
      root: { name: r.root.name, dagRunId: r.root.dagRunId },
      parent: r.parent ? { name: r.parent.name, dagRunId: r.parent.dagRunId } : null,
      startedAt: r.startedAt,
    }));
  }

  /** Stops every run executing now (they end cancelled). */
  stopAll(): void {
    for (const r of this.#runs.values()) r.stop.abort();
  }

  /** Resolves once no slot is taken and no run executes. */
  whenIdle(): Promise<void> {
    if (this.#runs.size === 0 && this.#slots === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.add(resolve));
  }

  /** Wakes the `whenIdle` waiters if this worker is idle now. */
  notifyIdle(): void {
    if (this.#runs.size !== 0 || this.#slots !== 0) return;
    for (const r of this.#idle) r();
    this.#idle.clear();
  }
}
