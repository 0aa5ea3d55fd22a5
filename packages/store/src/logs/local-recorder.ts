import { mkdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Clock } from '@trellis/core';
import type { RunRecorder, StepLogs } from '@trellis/engine';
import type { DagRunRecord } from '@trellis/spec';
import { fd } from '../fs/fd.js';
import type { StoreWriteErrors } from '../health/store-write-errors.js';
import { endLogFile, LogFile } from './log-file.js';
import { markTruncated } from './truncation-marker.js';

/** What the local recorder needs from the store. */
export interface LocalRecorderDeps {
  readonly runLogPath: string;
  /** The run log's folder is known to exist (the store just made it). @default false */
  readonly logDirExists?: boolean;
  readonly stepLogPaths: (key: string) => { stdoutPath: string; stderrPath: string };
  readonly save: (record: DagRunRecord) => Promise<void>;
  readonly clock: Clock;
  readonly warn: (message: string) => void;
  /** Where write errors are counted (health, metrics) and truncated logs remembered. */
  readonly writeErrors: StoreWriteErrors;
}

/**
 * The recorder of a run executed in this process (docs/architecture.md, "The path of a run"):
 * saves go straight to the store, the run log and step logs are append-only files. A write error
 * on a log (a full disk, a deleted directory) never stops the run by itself: it is counted, said
 * through `warn`, marked beside the file (the log endpoints report the log as truncated), and a
 * step's `close` rejects with it, so the engine fails the step (docs/decisions.md, "Log write
 * failures"). `close` makes every log written since the last `close` durable (fsync).
 */
export class LocalRunRecorder implements RunRecorder {
  readonly runLogPath: string;
  readonly #deps: LocalRecorderDeps;
  #runLog: LogFile | undefined;
  /** Directories known to exist: a step's log folder is created once per run, not per step. */
  readonly #dirs = new Set<string>();
  /** Files opened since the last `close`: it fsyncs those that got bytes, and their folders. */
  readonly #unsynced = new Set<LogFile>();

  constructor(deps: LocalRecorderDeps) {
    this.#deps = deps;
    this.runLogPath = deps.runLogPath;
  }

  save(record: DagRunRecord): Promise<void> {
    return this.#deps.save(record);
  }

  /** Appends `line` to the run log, each of its lines prefixed by the clock's ISO time. */
  log(line: string): void {
    const at = this.#deps.clock.now().toISOString();
    const text = line
      .split(/\r?\n/)
      .map((l) => `${at} ${l}\n`)
      .join('');
    this.#stream().write(text);
  }

  async openStepLogs(key: string): Promise<StepLogs> {
    const { stdoutPath, stderrPath } = this.#deps.stepLogPaths(key);
    const dir = dirname(stdoutPath);
    if (!this.#dirs.has(dir)) {
      // a folder that cannot be made fails the files' opening, reported by them
      await mkdir(dir, { recursive: true }).then(
        () => this.#dirs.add(dir),
        () => undefined,
      );
    }
    // Not waiting for 'open': writes are buffered until the file is open. Saves two round trips
    // per step.
    const stdout = this.#open(stdoutPath);
    const stderr = this.#open(stderrPath);
    return {
      stdoutPath,
      stderrPath,
      stdout,
      stderr,
      close: async () => {
        await Promise.all([endLogFile(stdout), endLogFile(stderr)]);
        const failed = [stdout, stderr].find((f) => f.failure !== undefined);
        if (failed) throw new Error(this.#deps.writeErrors.truncation(failed.path));
      },
    };
  }

  async close(): Promise<void> {
    const s = this.#runLog;
    this.#runLog = undefined;
    if (s !== undefined) await endLogFile(s);
    const files = [...this.#unsynced];
    this.#unsynced.clear();
    if (files.length === 0) return;
    // an empty file needs no data synced, only its name (the folder's sync)
    const paths = files.filter((f) => f.written > 0).map((f) => f.path);
    const dirs = new Set(files.map((f) => dirname(f.path)));
    await Promise.all([
      ...paths.map((p) => fd.syncFile(p).catch((e: unknown) => this.#failed(p, e))),
      ...[...dirs].map((d) => fd.syncDir(d).catch((e: unknown) => this.#failed(d, e))),
    ]);
  }

  #open(path: string): LogFile {
    const file = new LogFile(path, (p, e) => this.#failed(p, e));
    this.#unsynced.add(file);
    return file;
  }

  #failed(path: string, e: unknown): void {
    const { message } = this.#deps.writeErrors.note('log', path, e);
    this.#deps.warn(message);
    void markTruncated(path, message);
  }

  #stream(): LogFile {
    if (this.#runLog === undefined) {
      // Synchronous once per run: log() is synchronous by contract.
      const dir = dirname(this.runLogPath);
      try {
        if (!this.#deps.logDirExists) mkdirSync(dir, { recursive: true });
      } catch {
        // the file's opening fails and reports it
      }
      this.#dirs.add(dir); // step logs live there too
      this.#runLog = this.#open(this.runLogPath);
    }
    return this.#runLog;
  }
}
