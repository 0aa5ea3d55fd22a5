/** The parts of a run record (or of its summary) the run metrics read. */
export interface RunFacts {
  readonly name: string;
  readonly dagRunId: string;
  /** The root run; a child run's id is unique only under its root. */
  readonly root?: { readonly dagRunId: string };
  readonly status: number;
  /** The queue the run waits in or ran through (`''`: none). */
  readonly queue: string;
  readonly queuedAt: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  /** Grows with every save of the record: a lower one is an older view. */
  readonly revision: number;
}

/** Identifies a run: a child run's id is unique only under its root. */
export const runKeyOf = (run: RunFacts): string =>
  `${run.root?.dagRunId ?? run.dagRunId}/${run.name}/${run.dagRunId}`;

/** What {@link RunTransitions} reports, once per execution of a run. */
export interface TransitionListener {
  /** The run started executing (it has a `startedAt`). */
  started(run: RunFacts): void;
  /** The run reached a final status (2, 3, 4 or 6) after it started. */
  finished(run: RunFacts): void;
}

const RUNNING = 1;
const FINAL: ReadonlySet<number> = new Set([2, 3, 4, 6]);

/** How many runs are remembered; the least recently seen finished ones are forgotten first. */
const REMEMBERED = 10_000;
/** Finished runs are forgotten this many at a time. */
const FORGET_BATCH = 1_000;

interface Seen {
  phase: 'started' | 'finished';
  revision: number;
}

/**
 * Turns the stream of run records a server sees (engine events of local runs, the coordinator's
 * updates of remote ones, the store's history at start) into one `started` and one `finished`
 * per execution, whatever the order and repetition of the views: a view older than the last one
 * applied (lower `revision`) is ignored, a final view of a finished run is a repeat, and only a
 * running view starts a finished run again (a retry). Runs that never started (dequeued,
 * cancelled before a worker took them) are not reported.
 */
export class RunTransitions {
  readonly #seen = new Map<string, Seen>();
  readonly #on: TransitionListener;

  constructor(on: TransitionListener) {
    this.#on = on;
  }

  observe(run: RunFacts): void {
    const key = runKeyOf(run);
    const prev = this.#seen.get(key);
    if (prev !== undefined && run.revision <= prev.revision) return;
    const final = FINAL.has(run.status);
    if (run.startedAt === '' || (!final && run.status !== RUNNING)) return;
    let phase = prev?.phase;
    if (phase === 'finished' && final) return; // a later save of a finished run
    if (phase !== 'started') {
      this.#on.started(run);
      phase = 'started';
    }
    if (final) {
      this.#on.finished(run);
      phase = 'finished';
    }
    this.#remember(key, phase, run.revision);
  }

  /**
   * A run of the history read at start. A finished one is reported without being remembered
   * unless `remember` (a view of it is waiting to be applied): the history holds many more
   * finished runs than could be kept, and no later view of them is expected.
   */
  observePast(run: RunFacts, remember: boolean): void {
    if (remember || !FINAL.has(run.status)) return this.observe(run);
    if (run.startedAt === '') return;
    this.#on.started(run);
    this.#on.finished(run);
  }

  #remember(key: string, phase: Seen['phase'], revision: number): void {
    this.#seen.delete(key); // re-inserted last: the map's order is the order of last use
    this.#seen.set(key, { phase, revision });
    if (this.#seen.size > REMEMBERED + FORGET_BATCH) this.#forgetOldestFinished();
  }

  /**
   * Forgets the least recently seen finished runs down to {@link REMEMBERED}, in one pass (running
   * runs are always remembered); one at a time, each pass would walk the holes the last left.
   */
  #forgetOldestFinished(): void {
    let excess = this.#seen.size - REMEMBERED;
    for (const [key, seen] of this.#seen) {
      if (excess <= 0) return;
      if (seen.phase !== 'finished') continue;
      this.#seen.delete(key);
      excess -= 1;
    }
  }
}
