import type { Clock } from '@trellis/core';
import type { RunRef } from '@trellis/spec';
import type { PgDb } from '../db/pg-db.js';
import { keyOf, keyValues, runNotFound, WHERE_KEY } from '../runs/run-rows.js';

/** How often `watch` looks for a stop request. */
const STOP_POLL_MS = 500;

/**
 * Stop requests of runs in PostgreSQL: the run row's `stop_requested_at`, set by any process and
 * polled by the one executing the run (the file store's stop files, stop/stop-request.ts there).
 * `root` locates a child run.
 */
export class PgStopRequests {
  readonly #db: PgDb;
  readonly #clock: Clock;
  readonly #warn: (message: string) => void;

  constructor(db: PgDb, clock: Clock, warn: (message: string) => void) {
    this.#db = db;
    this.#clock = clock;
    this.#warn = warn;
  }

  /** `PgRunStore.requestStop`. Errors: not_found. */
  async request(ref: RunRef, root: RunRef | undefined): Promise<void> {
    const r = await this.#db.query(
      `UPDATE trellis_runs SET stop_requested_at = COALESCE(stop_requested_at, $5) WHERE ${WHERE_KEY}`,
      [...keyValues(keyOf(ref, root)), this.#clock.now()],
    );
    if (r.rowCount === 0) throw runNotFound(ref, root);
  }

  /** `PgRunStore.isStopRequested`. Errors: not_found. */
  async isRequested(ref: RunRef, root: RunRef | undefined): Promise<boolean> {
    const r = await this.#db.query<{ stop: Date | null }>(
      `SELECT stop_requested_at AS stop FROM trellis_runs WHERE ${WHERE_KEY}`,
      [...keyValues(keyOf(ref, root))],
    );
    if (r.rows[0] === undefined) throw runNotFound(ref, root);
    return r.rows[0].stop !== null;
  }

  /** Calls `onStop` once when a stop is requested (polled); returns a disposer. */
  watch(ref: RunRef, root: RunRef | undefined, onStop: () => void): () => void {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    // unref'd: a watch never holds the process by itself (a run's own work does), so one whose
    // disposer was missed cannot keep a stopped process alive (it still polls while it lives)
    const again = (): void => void (timer = setTimeout(check, STOP_POLL_MS)).unref();
    const check = (): void => {
      this.isRequested(ref, root).then(
        (stop) => {
          if (done) return;
          if (!stop) return again();
          done = true;
          try {
            onStop();
          } catch (e) {
            this.#warn(`stop handler of run ${ref.name}/${ref.dagRunId} failed: ${String(e)}`);
          }
        },
        () => {
          if (!done) again(); // the database away: try again
        },
      );
    };
    check();
    return () => {
      done = true;
      if (timer !== undefined) clearTimeout(timer);
    };
  }
}
