import { mkdirSync, readdirSync } from 'node:fs';
import { mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoOf } from './dag-file-writes.js';
import { DirWatch } from './dir-watch.js';

const SUFFIX = '.suspend';

/**
 * Where the suspend flags of the DAG files live (the port `FsDagStore` uses): files in a folder
 * (`SuspendFlags`, the embedded default) or a table shared by every instance on one PostgreSQL
 * (`PgSuspendFlags` in @trellis/store-pg, docs/decisions.md). `names` is synchronous: an
 * implementation that keeps its flags elsewhere answers from a set kept in memory.
 */
export interface DagSuspendFlags {
  /** File names of the suspended DAGs; this instance's own writes are in it at once. */
  names(): ReadonlySet<string>;
  has(fileName: string): boolean;
  set(fileName: string, suspended: boolean): Promise<void>;
  /** The flag follows a renamed file; a stale flag of the new name must not suspend it. */
  move(from: string, to: string): Promise<void>;
  /** Stops keeping the set current (watches, connections, timers). */
  close(): void;
}

/**
 * The suspend flags of the DAG files: empty files `<fileName>.suspend` in one folder (as the
 * peer does). Watched, the set of suspended file names is read once and kept until the folder
 * changes; unwatched, each question reads the folder.
 */
export class SuspendFlags implements DagSuspendFlags {
  readonly #watch: DirWatch | undefined;
  #names: Set<string> | undefined;

  constructor(
    private readonly dir: string,
    watch: boolean,
  ) {
    const forget = (): void => {
      this.#names = undefined;
    };
    this.#watch = watch ? new DirWatch(dir, forget, () => undefined) : undefined;
  }

  /** File names of the suspended DAGs. */
  names(): ReadonlySet<string> {
    if (this.#watch && !this.#watch.active) {
      // Watched from the start: a flag written by another process is seen at once.
      mkdirSync(this.dir, { recursive: true });
      this.#watch.ensure();
    }
    if (this.#names && this.#watch?.active) return this.#names;
    const names = this.#read();
    if (this.#watch?.active) this.#names = names;
    return names;
  }

  has(fileName: string): boolean {
    return this.names().has(fileName);
  }

  async set(fileName: string, suspended: boolean): Promise<void> {
    this.#names = undefined;
    if (!suspended) await unlinkIfPresent(this.#path(fileName));
    else {
      await mkdir(this.dir, { recursive: true });
      await writeFile(this.#path(fileName), '');
    }
    this.#names = undefined;
  }

  /** The flag follows a renamed file; a stale flag of the new name must not suspend it. */
  async move(from: string, to: string): Promise<void> {
    this.#names = undefined;
    if (this.has(from)) await rename(this.#path(from), this.#path(to));
    else await unlinkIfPresent(this.#path(to));
    this.#names = undefined;
  }

  close(): void {
    this.#watch?.close();
  }

  #path(fileName: string): string {
    return join(this.dir, `${fileName}${SUFFIX}`);
  }

  #read(): Set<string> {
    try {
      return new Set(
        readdirSync(this.dir)
          .filter((n) => n.endsWith(SUFFIX))
          .map((n) => n.slice(0, -SUFFIX.length)),
      );
    } catch (e) {
      if (errnoOf(e) === 'ENOENT') return new Set();
      throw e;
    }
  }
}

const unlinkIfPresent = async (path: string): Promise<void> => {
  try {
    await unlink(path);
  } catch (e) {
    if (errnoOf(e) !== 'ENOENT') throw e;
  }
};
