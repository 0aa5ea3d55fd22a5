import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { dirname } from 'node:path';
import type { Clock } from '@trellis/core';
import type { RunRecorder, StepLogs } from '@trellis/engine';
import type { DagRunRecord } from '@trellis/spec';
import { messageOf } from '../fs/fs-errors.js';

/** What the local recorder needs from the store. */
export interface LocalRecorderDeps {
  readonly runLogPath: string;
  /** The run log's folder is known to exist (the store just made it). @default false */
  readonly logDirExists?: boolean;
  readonly stepLogPaths: (key: string) => { stdoutPath: string; stderrPath: string };
  readonly save: (record: DagRunRecord) => Promise<void>;
  readonly clock: Clock;
  readonly warn: (message: string) => void;
}

/**
 * The recorder of a run executed in this process (docs/architecture.md, "The path of a run"): saves go straight
 * to the store, the run log and step logs are append-only files. Write errors on a log (a full
 * disk, a deleted directory) are reported through `warn`, never thrown into the engine.
 */
export class LocalRunRecorder implements RunRecorder {
  readonly runLogPath: string;
  readonly #deps: LocalRecorderDeps;
  #runLog: WriteStream | undefined;
  /** Directories known to exist: a step's log folder is created once per run, not per step. */
  readonly #dirs = new Set<string>();

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
      await mkdir(dir, { recursive: true });
      this.#dirs.add(dir);
    }
    // Not waiting for 'open': writes are buffered until the file is open, and an open error is
    // reported through warn like any later write error. Saves two round trips per step.
    const stdout = appendStream(stdoutPath, this.#deps.warn);
    const stderr = appendStream(stderrPath, this.#deps.warn);
    return {
      stdoutPath,
      stderrPath,
      stdout,
      stderr,
      close: async () => {
        await Promise.all([endStream(stdout), endStream(stderr)]);
      },
    };
  }

  async close(): Promise<void> {
    const s = this.#runLog;
    this.#runLog = undefined;
    if (s !== undefined) await endStream(s);
  }

  #stream(): WriteStream {
    if (this.#runLog === undefined) {
      // Synchronous once per run: log() is synchronous by contract.
      const dir = dirname(this.runLogPath);
      if (!this.#deps.logDirExists) mkdirSync(dir, { recursive: true });
      this.#dirs.add(dir); // step logs live there too
      this.#runLog = appendStream(this.runLogPath, this.#deps.warn);
    }
    return this.#runLog;
  }
}

const appendStream = (path: string, warn: (m: string) => void): WriteStream => {
  const s = createWriteStream(path, { flags: 'a' });
  s.on('error', (e) => warn(`log file ${path} could not be written: ${messageOf(e)}`));
  return s;
};

/** Ends a stream and waits until its file is flushed and closed. */
const endStream = async (s: WriteStream): Promise<void> => {
  if (s.closed || s.destroyed) return;
  s.end();
  await finished(s).catch(() => undefined); // a write error was already reported by its listener
};
