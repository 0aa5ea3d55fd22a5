import { finished } from 'node:stream/promises';
import { AppError, ErrorCode, type Clock } from '@trellis/core';
import type { RunRecorder, StepLogs } from '@trellis/engine';
import type { DagRunRecord } from '@trellis/spec';
import { stepLogPathsBeside } from '@trellis/store';
import { LogAppender } from './log-appender.js';
import type { PgLogs } from './pg-logs.js';

/** How often a run's save is tried again while the database is away. */
const SAVE_RETRY_MS = 500;

export interface PgRecorderDeps {
  readonly runLogPath: string;
  readonly logs: PgLogs;
  readonly save: (record: DagRunRecord) => Promise<void>;
  readonly clock: Clock;
  readonly warn: (message: string) => void;
}

/**
 * The recorder of a run executed in this process with the PostgreSQL store: saves through the
 * store, and writes the run log (timestamped lines) and step logs as rows (see `PgLogs`), under
 * the same names as the file store's files.
 */
export class PgRunRecorder implements RunRecorder {
  readonly runLogPath: string;
  readonly #deps: PgRecorderDeps;
  readonly #open = new Set<LogAppender>();
  #runLog: LogAppender | undefined;

  constructor(deps: PgRecorderDeps) {
    this.#deps = deps;
    this.runLogPath = deps.runLogPath;
  }

  /**
   * Saves through the store; while the database is away (`service_unavailable`) the save is
   * retried every `SAVE_RETRY_MS` until it lands, so a run in flight is never lost: its steps
   * go on, its next transition waits for the database (docs/ha.md, failure modes).
   */
  async save(record: DagRunRecord): Promise<void> {
    for (let told = false; ; told = true) {
      try {
        return await this.#deps.save(record);
      } catch (e) {
        if (!AppError.is(e) || e.code !== ErrorCode.ServiceUnavailable) throw e;
        if (!told)
          this.#deps.warn(
            `run ${record.name}/${record.dagRunId}: its record waits for the database: ${e.message}`,
          );
        await this.#deps.clock.sleep(SAVE_RETRY_MS);
      }
    }
  }

  log(line: string): void {
    const at = this.#deps.clock.now().toISOString();
    this.#runLog ??= this.#appender(this.runLogPath);
    this.#runLog.write(
      line
        .split(/\r?\n/)
        .map((l) => `${at} ${l}\n`)
        .join(''),
    );
  }

  async openStepLogs(key: string): Promise<StepLogs> {
    const { stdoutPath, stderrPath } = stepLogPathsBeside(this.runLogPath, key);
    const out = this.#appender(stdoutPath);
    const err = this.#appender(stderrPath);
    // the logs exist (empty) once opened, as the file store's files do
    await Promise.all([this.#deps.logs.touch(stdoutPath), this.#deps.logs.touch(stderrPath)]);
    const stdout = out.stream();
    const stderr = err.stream();
    return {
      stdoutPath,
      stderrPath,
      stdout,
      stderr,
      close: async () => {
        stdout.end();
        stderr.end();
        await Promise.all([finished(stdout), finished(stderr)]);
        const failed = [out, err].find((a) => a.failure !== undefined);
        if (failed?.failure !== undefined) throw new Error(failed.failure);
      },
    };
  }

  async close(): Promise<void> {
    const all = [...this.#open];
    this.#runLog = undefined;
    this.#open.clear();
    await Promise.all(all.map((a) => a.settled()));
  }

  #appender(path: string): LogAppender {
    const a = new LogAppender(
      path,
      this.#deps.logs,
      (p, e) => {
        const message = `log ${p} is incomplete: a write to the database failed (${(e as Error).message})`;
        this.#deps.warn(message);
        return message;
      },
      (p, e) => this.#deps.warn(`log ${p} waits for the database: ${(e as Error).message}`),
    );
    this.#open.add(a);
    return a;
  }
}
