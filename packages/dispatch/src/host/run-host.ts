import {
  hostedRunKey,
  runDag,
  type ChildRunner,
  type EngineDeps,
  type RunRecorder,
} from '@trellis/engine';
import type { Dag, DagRunRecord } from '@trellis/spec';

/** What hosting the engine needs, the same in every process (the CLI wires it once). */
export type RunHostDeps = Omit<EngineDeps, 'recorder' | 'children'>;

/**
 * The record save window of hosted runs (`EngineDeps.recordSaveWindowMs`): changes of node states
 * within 50 ms of a save are written together, so a run's saves no longer grow with the square
 * of its steps; what a crash can lose is at most that window (docs/decisions.md, "Per-step
 * cost").
 */
export const RECORD_SAVE_WINDOW_MS = 50;

/** One run to execute: its stored record, its DAG snapshot and where it records. */
export interface HostedRun {
  readonly record: DagRunRecord;
  readonly dag: Dag;
  readonly localDags: readonly Dag[];
  readonly recorder: RunRecorder;
  /** Where the run's `run:` steps start their child runs. */
  readonly children: ChildRunner;
  /** Aborting it stops the run (it ends cancelled). */
  readonly stop?: AbortSignal;
  readonly dryRun?: boolean;
}

/** A run the host executes: its completion, and when it is running on disk. */
export interface RunningRun {
  readonly key: string;
  readonly stop: AbortController;
  /** The final record; rejects only for a bug (the engine never throws for a failing step). */
  readonly done: Promise<DagRunRecord>;
  /** Resolves once the run is durably running, or once it ended without starting. */
  readonly started: Promise<void>;
}

/**
 * The one run host: the local dispatcher and every worker execute runs here. It runs the engine
 * with the run's recorder, tracks what executes (for a graceful stop) and reports each end to
 * `onEnd`. It builds nothing: the record comes built (`newRunRecord` in the engine).
 */
export class RunHost {
  readonly #deps: RunHostDeps;
  readonly #running = new Map<string, RunningRun>();
  readonly #idle = new Set<() => void>();

  constructor(deps: RunHostDeps) {
    this.#deps = deps;
  }

  /** How many runs execute now (children included). */
  get size(): number {
    return this.#running.size;
  }

  /** The runs executing now. */
  running(): IterableIterator<RunningRun> {
    return this.#running.values();
  }

  /** True while the run (a child: under its root) executes here. */
  has(record: Parameters<typeof hostedRunKey>[0]): boolean {
    return this.#running.has(hostedRunKey(record));
  }

  execute(run: HostedRun): RunningRun {
    const key = hostedRunKey(run.record);
    const stop = new AbortController();
    run.stop?.addEventListener('abort', () => stop.abort(), { once: true });
    let markStarted: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (markStarted = resolve));
    const done = runDag(
      {
        recordSaveWindowMs: RECORD_SAVE_WINDOW_MS,
        ...this.#deps,
        children: run.children,
        recorder: run.recorder,
      },
      {
        dag: run.dag,
        localDags: run.localDags,
        record: structuredClone(run.record),
        stop: stop.signal,
        dryRun: run.dryRun ?? false,
        onStarted: () => markStarted(),
      },
    ).finally(() => {
      this.#running.delete(key);
      this.#notifyIdle();
    });
    const started = Promise.race([
      running,
      done.then(
        () => undefined,
        () => undefined,
      ),
    ]);
    const hosted = { key, stop, done, started };
    this.#running.set(key, hosted);
    return hosted;
  }

  /** Resolves once no run executes here. */
  whenIdle(): Promise<void> {
    if (this.#running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.add(resolve));
  }

  /**
   * Graceful shutdown: waits up to `graceMs` for the runs to finish, then stops the rest (their
   * steps get their stop signals; the runs end cancelled) and waits for them.
   */
  async drain(graceMs: number): Promise<void> {
    if (this.#running.size === 0) return;
    const timer = new AbortController();
    await Promise.race([
      this.whenIdle(),
      this.#deps.clock.sleep(graceMs, timer.signal).catch(() => undefined),
    ]);
    timer.abort();
    for (const r of this.#running.values()) r.stop.abort();
    await this.whenIdle();
  }

  #notifyIdle(): void {
    if (this.#running.size !== 0) return;
    for (const r of this.#idle) r();
    this.#idle.clear();
  }
}
