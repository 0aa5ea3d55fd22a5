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
    const key = `${run.root?.dagRunId ?? run.dagRunId}/${run.name}/${run.dagRunId}`;
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
    this.#seen.delete(key); // re-inserted last: the map's order is the order of last use
    this.#seen.set(key, { phase, revision: run.revision });
    if (this.#seen.size > REMEMBERED) this.#forgetOldestFinished();
  }

  /** Forgets the least recently seen finished run (running runs are always remembered). */
  #forgetOldestFinished(): void {
    for (const [key, seen] of this.#seen) {
      if (seen.phase !== 'finished') continue;
      this.#seen.delete(key);
      return;
    }
  }
}
