import type { Clock } from '@trellis/core';
import { errnoOf, messageOf } from '../fs/fs-errors.js';

/** What failed to be written: a log file, or a run record. */
export type StoreWriteKind = 'log' | 'record';

/** A write error as the store keeps it. */
export interface StoreWriteError {
  readonly kind: StoreWriteKind;
  readonly path: string;
  /** The errno code (`ENOSPC`), or `''` for an error without one. */
  readonly code: string;
  /** One sentence naming the file and the cause. */
  readonly message: string;
  readonly at: Date;
}

/**
 * How long after its last write error the store still reports disk trouble in `GET /health`
 * (docs/decisions.md, "Log write failures").
 */
const WRITE_TROUBLE_WINDOW_MS = 5 * 60_000;

/**
 * The store's write errors, for `GET /health`, the `svc_store_write_errors_total` metric and the
 * log endpoints: counts by kind since the process started, the last error, and the log files a
 * write to which failed (their content is incomplete), with why.
 */
export class StoreWriteErrors {
  readonly #clock: Clock;
  readonly #counts: Record<StoreWriteKind, number> = { log: 0, record: 0 };
  readonly #truncated = new Map<string, string>();
  #last: StoreWriteError | undefined;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Counts a failed write of `path` and returns it as the store keeps it. */
  note(kind: StoreWriteKind, path: string, error: unknown): StoreWriteError {
    const code = errnoOf(error) ?? '';
    const what = kind === 'log' ? 'log file' : 'run record';
    const e: StoreWriteError = {
      kind,
      path,
      code,
      message: `${what} ${path} could not be written: ${messageOf(error)}`,
      at: this.#clock.now(),
    };
    this.#counts[kind] += 1;
    this.#last = e;
    if (kind === 'log' && !this.#truncated.has(path)) this.#truncated.set(path, e.message);
    return e;
  }

  /** Failed writes by kind since the process started. */
  counts(): Readonly<Record<StoreWriteKind, number>> {
    return { ...this.#counts };
  }

  /** Why the log file `path` is incomplete, when a write to it failed in this process. */
  truncation(path: string): string | undefined {
    return this.#truncated.get(path);
  }

  /** The store's disk trouble in words while its last write error is recent; else undefined. */
  problem(): string | undefined {
    const last = this.#last;
    if (last === undefined) return undefined;
    const age = this.#clock.now().getTime() - last.at.getTime();
    if (age > WRITE_TROUBLE_WINDOW_MS) return undefined;
    const n = this.#counts.log + this.#counts.record;
    return `the store could not write ${n} time(s) since it started; last at ${last.at.toISOString()}: ${last.message}`;
  }
}
