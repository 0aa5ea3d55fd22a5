import { mkdir, open, stat, type FileHandle } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import type { RunRef } from '@trellis/spec';
import type { StoreWriteErrors } from '../health/store-write-errors.js';
import { markTruncated } from './truncation-marker.js';

/** What a {@link LogChunkWriter} may use besides its log folder. */
export interface LogChunkWriterOptions {
  /** Where failed writes are counted (health, metrics) and truncated logs remembered. */
  readonly writeErrors?: StoreWriteErrors;
  /**
   * The log folder of a run as its stored record names it (a DAG's own `logDir`), so chunks of
   * such a run are accepted there too; undefined when unknown.
   */
  readonly runLogDirOf?: (run: RunRef, root: RunRef) => Promise<string | undefined>;
}

/** Append handles kept open at most. */
const MAX_OPEN = 256;

/**
 * Applies log chunks from workers to files under `logDir`, each at the byte offset it names (the
 * coordinator writes workers' logs through it: the store owns the log files).
 * Bytes below a file's current size were applied before (a batch sent again after a reconnect)
 * and are skipped, so every byte lands exactly once and in order.
 */
export class LogChunkWriter {
  readonly #root: string;
  /** Known sizes, so most chunks need no stat. */
  readonly #sizes = new Map<string, number>();
  readonly #warn: (m: string) => void;
  /** Open append handles (most recently used last), so a run's chunks cost one open per file. */
  readonly #handles = new Map<string, Promise<FileHandle>>();
  readonly #options: LogChunkWriterOptions;
  /** Files a write to which failed: later chunks are acknowledged and dropped. */
  readonly #failed = new Set<string>();
  /** Own log folders of runs (a DAG's `logDir`), by `root/run`. */
  readonly #runDirs = new Map<string, string>();

  constructor(logDir: string, warn: (m: string) => void, options: LogChunkWriterOptions = {}) {
    this.#root = resolve(logDir);
    this.#warn = warn;
    this.#options = options;
  }

  /** True when `path` is a file under the log directory (workers name files by path). */
  isInside(path: string): boolean {
    return isUnder(path, this.#root);
  }

  /**
   * True when a worker may write `path` for `run`: under the log directory, or under the run's
   * own log folder (its DAG's `logDir`) as its stored record names it.
   */
  async accepts(path: string, run: RunRef | undefined, root: RunRef | undefined): Promise<boolean> {
    if (this.isInside(path)) return true;
    const lookup = this.#options.runLogDirOf;
    if (run === undefined || lookup === undefined) return false;
    const key = `${root?.name ?? run.name}/${root?.dagRunId ?? run.dagRunId}/${run.name}/${run.dagRunId}`;
    let dir = this.#runDirs.get(key);
    if (dir === undefined) {
      dir = await lookup(run, root ?? run);
      if (dir === undefined) return false;
      this.#runDirs.set(key, dir); // forgotten when the run ends (forgetUnder)
    }
    return isUnder(path, dir);
  }

  /** Bytes in a log file now, read from the file (0 when it does not exist yet). */
  sizeOf(path: string): Promise<number> {
    return stat(path).then(
      (s) => s.size,
      () => 0,
    );
  }

  /**
   * Appends the part of `data` at `offset` not yet in the file; returns the file's new size. A
   * write that fails (a full disk) is counted and marked beside the file, and this chunk and the
   * file's later ones are acknowledged as applied (their end is returned) and dropped, so a
   * worker never resends them forever and other files go on (docs/decisions.md).
   */
  async apply(path: string, offset: number, data: Buffer): Promise<number> {
    if (this.#failed.has(path)) return offset + data.length;
    try {
      return await this.#apply(path, offset, data);
    } catch (e) {
      this.#failed.add(path);
      const message =
        this.#options.writeErrors?.note('log', path, e).message ??
        `log file ${path} could not be written: ${String(e)}`;
      this.#warn(message);
      await markTruncated(path, message);
      return offset + data.length;
    }
  }

  async #apply(path: string, offset: number, data: Buffer): Promise<number> {
    let size = this.#sizes.get(path);
    if (size === undefined) {
      size = await stat(path).then(
        (s) => s.size,
        () => 0,
      );
      if (size === 0) await mkdir(dirname(path), { recursive: true });
    }
    const end = offset + data.length;
    if (end <= size) {
      this.#sizes.set(path, size);
      return size;
    }
    let part = data;
    if (offset < size) part = data.subarray(size - offset);
    else if (offset > size)
      this.#warn(`log ${path}: ${offset - size} bytes missing before offset ${offset}`);
    const fh = await this.#handle(path);
    await fh.write(part);
    const newSize = size + part.length;
    this.#sizes.set(path, newSize);
    return newSize;
  }

  /** Closes and forgets the files of a finished run (they are re-read if written again). */
  forgetUnder(dir: string): void {
    const prefix = dir.endsWith(sep) ? dir : dir + sep;
    for (const p of this.#sizes.keys()) if (p.startsWith(prefix)) this.#sizes.delete(p);
    for (const p of this.#failed) if (p.startsWith(prefix)) this.#failed.delete(p);
    for (const [k, d] of this.#runDirs) if (d + sep === prefix) this.#runDirs.delete(k);
    for (const [p, fh] of this.#handles)
      if (p.startsWith(prefix)) {
        this.#handles.delete(p);
        void closeHandle(fh);
      }
  }

  /** Closes every open file. */
  async close(): Promise<void> {
    const all = [...this.#handles.values()];
    this.#handles.clear();
    await Promise.all(all.map(closeHandle));
  }

  #handle(path: string): Promise<FileHandle> {
    const known = this.#handles.get(path);
    if (known) {
      this.#handles.delete(path);
      this.#handles.set(path, known);
      return known;
    }
    const fh = open(path, 'a');
    this.#handles.set(path, fh);
    fh.catch(() => this.#handles.delete(path));
    if (this.#handles.size > MAX_OPEN) {
      const [oldest, old] = this.#handles.entries().next().value as [string, Promise<FileHandle>];
      this.#handles.delete(oldest);
      void closeHandle(old);
    }
    return fh;
  }
}

const isUnder = (path: string, dir: string): boolean =>
  resolve(path).startsWith(resolve(dir) + sep);

const closeHandle = async (fh: Promise<FileHandle>): Promise<void> => {
  try {
    await (await fh).close();
  } catch {
    // never opened, or already closed
  }
};
