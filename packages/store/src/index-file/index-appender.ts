import { fd } from '../fs/fd.js';
import { isMissing } from '../fs/fs-errors.js';
import type { IndexState } from './index-state.js';
import { statP } from './index-sync.js';

const MAX_APPEND_ATTEMPTS = 5;
/** An index file with no append for this long is closed. */
const APPEND_IDLE_MS = 1000;

/** What an `IndexAppender` needs from its index. */
export interface IndexAppenderDeps {
  readonly path: string;
  readonly state: IndexState;
  readonly warn: (message: string) => void;
  /** Runs a task in the index's chain (the idle close waits for what is under way). */
  readonly serial: (task: () => Promise<void>) => Promise<void>;
}

/**
 * Appends lines to an index file. The file stays open while runs keep changing and is closed
 * once idle; when another process replaced the file meanwhile, the lines are written again.
 */
export class IndexAppender {
  readonly #deps: IndexAppenderDeps;
  /** The file open for appends (see `#closeWhenIdle`), with the inode it was opened as. */
  #file: { fd: number; ino: number } | undefined;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(deps: IndexAppenderDeps) {
    this.#deps = deps;
  }

  /**
   * Appends `count` complete lines. Another process may compact or rebuild the file meanwhile
   * (rename over it): when the file we wrote to is no longer the one at the path, the lines are
   * written again to the new file. A duplicate is harmless (same key, same revision). When the
   * lines landed right at the end of what the index had read (nobody else appended), they are
   * counted as read, so the next answer does not read them back.
   */
  async append(text: string, count: number, durable = true): Promise<void> {
    const { path, state } = this.#deps;
    for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt++) {
      const file = (this.#file ??= await this.#open());
      try {
        await fd.write(file.fd, text);
        if (durable) await fd.datasync(file.fd);
      } catch (e) {
        await this.close();
        throw e;
      }
      const current = await statP(path).catch((e: unknown) => {
        if (isMissing(e)) return undefined;
        throw e;
      });
      if (current?.ino !== file.ino) {
        await this.close(); // replaced meanwhile: write to the file now at the path
        continue;
      }
      const bytes = Buffer.byteLength(text);
      if (state.loaded && file.ino === state.ino && current.size === state.offset + bytes) {
        state.offset += bytes;
        state.lines += count;
      }
      this.#closeWhenIdle();
      return;
    }
    this.#deps.warn(`run index ${path} kept being replaced while appending; it may lag`);
  }

  /** Closes the file open for appends, if any. */
  async close(): Promise<void> {
    clearTimeout(this.#idleTimer);
    const file = this.#file;
    this.#file = undefined;
    if (file !== undefined) await fd.close(file.fd).catch(() => undefined);
  }

  async #open(): Promise<{ fd: number; ino: number }> {
    const file = await fd.open(this.#deps.path, 'a');
    try {
      return { fd: file, ino: (await fd.stat(file)).ino };
    } catch (e) {
      await fd.close(file);
      throw e;
    }
  }

  /**
   * The file stays open for appends while runs keep changing (two system calls fewer per line),
   * and is closed once none came for `APPEND_IDLE_MS`, so idle DAGs hold no descriptor.
   */
  #closeWhenIdle(): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => void this.#deps.serial(() => this.close()), APPEND_IDLE_MS);
    this.#idleTimer.unref();
  }
}
