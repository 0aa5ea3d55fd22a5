import { statSync } from 'node:fs';
import { open } from 'node:fs/promises';

interface Stamp {
  readonly ino: bigint;
  readonly size: bigint;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
}

interface Entry extends Stamp {
  readonly text: string;
}

/** Most status files kept parsed; the oldest entries go first. */
const MAX_ENTRIES = 2000;

/** The stamp of the file at `path` now (a synchronous stat), or undefined when it is not there. */
const stampOf = (path: string): Stamp | undefined => {
  try {
    return statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
};

const same = (a: Stamp, b: Stamp): boolean =>
  a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;

/**
 * Recently read status files, revalidated by one synchronous `stat` (inode, size, and nanosecond mtime and
 * ctime): a client polling a run costs a stat instead of open, read and parse. Records are
 * replaced by rename, so any change (from this or another process) changes the stamp. The text
 * and its stamp come from the same open file, so a save landing during a read is never pinned.
 */
export class RecordCache {
  readonly #entries = new Map<string, Entry>();

  /**
   * Keeps `text` as the content of `path`, which this process just renamed into place from a file
   * whose inode was `ino`: the next read costs a stat, not a read. Only when `path` still is that
   * file (a rename by another process since then leaves the entry out, and the next read reads
   * the file).
   */
  remember(path: string, text: string, ino: bigint): void {
    this.#entries.delete(path);
    const st = stampOf(path);
    if (st?.ino === ino) this.#set(path, st, text);
  }

  /** Drops what is kept of `path` (this process replaced the file). */
  forget(path: string): void {
    this.#entries.delete(path);
  }

  /** The text of the file at `path`, from the cache when unchanged. Errors: the file system's. */
  async read(path: string): Promise<string> {
    const cached = this.#entries.get(path);
    if (cached) {
      // Synchronous: a stat of a cached folder entry costs a few microseconds, where the thread
      // pool's round trip costs six times as much CPU (a run history grid revalidates 30 records;
      // docs/decisions.md, "Not re-parsing on every list?").
      const st = stampOf(path);
      if (st && same(cached, st)) return cached.text;
      this.#entries.delete(path);
    }
    const fh = await open(path, 'r');
    try {
      const st = await fh.stat({ bigint: true });
      const text = await fh.readFile('utf8');
      this.#set(path, st, text);
      return text;
    } finally {
      await fh.close();
    }
  }

  #set(path: string, st: Stamp, text: string): void {
    this.#entries.set(path, {
      ino: st.ino,
      size: st.size,
      mtimeNs: st.mtimeNs,
      ctimeNs: st.ctimeNs,
      text,
    });
    if (this.#entries.size > MAX_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }
}
