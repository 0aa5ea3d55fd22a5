import { watch, type FSWatcher } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { isMissing } from '../fs/fs-errors.js';

/** Where new whole lines of a followed log go: lines `first`, `first + 1`, ... (1-based). */
export type LogLinesListener = (lines: readonly string[], first: number) => void;

/** A log being followed: `flush` sends what is left (a last line without newline too). */
export interface LogFollow {
  /** Reads to the end of the file, sends every line left, and stops following. */
  flush(): Promise<void>;
  /** Stops following (client gone). */
  close(): void;
}

const READ_BYTES = 64 * 1024;
const NL = 0x0a;
const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

/**
 * Follows a log file from line `fromLine` (1-based): sends the lines there now, then new whole
 * lines as they are written, woken by the file system (a watch on the log's folder, so a file
 * not created yet is followed too), never by polling. Lines before `fromLine` are read once and
 * skipped. A line is sent once it ends with a newline; `flush` also sends an unfinished last one.
 */
class LogFollower implements LogFollow {
  #pos = 0;
  #line = 1;
  #partial: Buffer = Buffer.alloc(0);
  #file: FileHandle | undefined;
  #closed = false;
  #flushing = false;
  #pumping: Promise<void> | undefined;
  #again = false;
  readonly #watcher: FSWatcher | undefined;

  constructor(
    private readonly path: string,
    private readonly fromLine: number,
    private readonly onLines: LogLinesListener,
    private readonly onError: (e: Error) => void,
  ) {
    const name = basename(path);
    try {
      this.#watcher = watch(dirname(path), (_event, f) => {
        if (!this.#closed && !this.#flushing && (f === null || f === name)) void this.#pump();
      });
      this.#watcher.on('error', (e) => onError(e));
    } catch (e) {
      onError(asError(e));
    }
    void this.#pump();
  }

  async flush(): Promise<void> {
    if (this.#closed) return;
    this.#flushing = true;
    while (this.#pumping) await this.#pumping;
    await this.#readToEnd(true).catch((e: unknown) => this.onError(asError(e)));
    this.close();
  }

  close(): void {
    this.#closed = true;
    this.#watcher?.close();
    const f = this.#file;
    this.#file = undefined;
    void f?.close().catch(() => undefined);
  }

  #pump(): Promise<void> {
    if (this.#pumping) {
      this.#again = true;
      return this.#pumping;
    }
    this.#pumping = (async () => {
      do {
        this.#again = false;
        await this.#readToEnd(false);
      } while (this.#again && !this.#closed);
    })()
      .catch((e: unknown) => this.onError(asError(e)))
      .finally(() => (this.#pumping = undefined));
    return this.#pumping;
  }

  async #readToEnd(last: boolean): Promise<void> {
    if (!this.#file) {
      try {
        this.#file = await open(this.path, 'r');
      } catch (e) {
        if (isMissing(e)) return;
        throw e;
      }
    }
    const buf = Buffer.alloc(READ_BYTES);
    for (;;) {
      const { bytesRead } = await this.#file.read(buf, 0, READ_BYTES, this.#pos);
      if (bytesRead === 0) break;
      this.#pos += bytesRead;
      this.#emit(Buffer.from(buf.subarray(0, bytesRead)), false);
    }
    if (last) this.#emit(Buffer.alloc(0), true);
  }

  /** Sends the whole lines in the partial line plus `chunk` (with `last`, the rest as well). */
  #emit(chunk: Buffer, last: boolean): void {
    const data = this.#partial.length > 0 ? Buffer.concat([this.#partial, chunk]) : chunk;
    const lines: string[] = [];
    let first = 0;
    const take = (text: string): void => {
      if (this.#line >= this.fromLine) {
        if (lines.length === 0) first = this.#line;
        lines.push(text);
      }
      this.#line++;
    };
    let start = 0;
    for (let i = data.indexOf(NL); i !== -1; i = data.indexOf(NL, start)) {
      take(data.toString('utf8', start, i));
      start = i + 1;
    }
    this.#partial = data.subarray(start);
    if (last && this.#partial.length > 0) {
      take(this.#partial.toString('utf8'));
      this.#partial = Buffer.alloc(0);
    }
    if (lines.length > 0 && !this.#closed) this.onLines(lines, first);
  }
}

/** Follows the log at `path` from line `fromLine` (see {@link LogFollower}). */
export const followLog = (
  path: string,
  fromLine: number,
  onLines: LogLinesListener,
  onError: (e: Error) => void,
): LogFollow => new LogFollower(path, fromLine, onLines, onError);
