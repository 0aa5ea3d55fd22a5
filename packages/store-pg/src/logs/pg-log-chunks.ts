import { dirname, resolve, sep } from 'node:path';
import type { RunRef } from '@trellis/spec';
import type { PgLogs } from './pg-logs.js';

/** What a {@link PgLogChunkWriter} needs besides the logs. */
export interface PgLogChunkWriterOptions {
  /** The folder log names are made under (`paths.logDir`). */
  readonly logDir: string;
  /** The run's stored record's `log` (a DAG's own `logDir`), or undefined when unknown. */
  readonly runLogOf: (run: RunRef, root: RunRef) => Promise<string | undefined>;
  readonly warn: (message: string) => void;
}

/**
 * The coordinator's writer of workers' log chunks on the PostgreSQL store (the file store's is
 * `LogChunkWriter`): each chunk lands in the log's rows at its byte offset, and the bytes a log
 * holds are kept in the database, so a chunk sent again, to this coordinator or to another on
 * the same database (a worker that moved), is applied once (docs/ha.md).
 */
export class PgLogChunkWriter {
  readonly #logs: PgLogs;
  readonly #opts: PgLogChunkWriterOptions;
  readonly #root: string;

  constructor(logs: PgLogs, opts: PgLogChunkWriterOptions) {
    this.#logs = logs;
    this.#opts = opts;
    this.#root = resolve(opts.logDir);
  }

  /** True when `path` is under the log folder, or the run's own log folder (its record's). */
  async accepts(path: string, run: RunRef | undefined, root: RunRef | undefined): Promise<boolean> {
    if (isUnder(path, this.#root)) return true;
    if (run === undefined) return false;
    const log = await this.#opts.runLogOf(run, root ?? run).catch(() => undefined);
    return log !== undefined && log !== '' && isUnder(path, dirname(log));
  }

  sizeOf(path: string): Promise<number> {
    return this.#logs.bytesOf(path);
  }

  /**
   * Applies the chunk's bytes not yet stored; returns the log's size. A database error rejects
   * (the worker keeps the chunk and sends it again).
   */
  apply(path: string, offset: number, data: Buffer): Promise<number> {
    return this.#logs.applyAt(path, offset, data, (missing) =>
      this.#opts.warn(`log ${path}: ${missing} bytes missing before offset ${offset}`),
    );
  }

  /** Nothing is held per run here. */
  forgetUnder(_dir: string): void {}

  close(): Promise<void> {
    return Promise.resolve();
  }
}

const isUnder = (path: string, dir: string): boolean =>
  resolve(path).startsWith(resolve(dir) + sep);
