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

  /** The text of the file at `path`, from the cache when unchanged. Errors: the file system's. */
  async read(path: string): Promise<string> {
    const cached = this.#entries.get(path);
    if (cached) {
      // Synchronous: a stat of a cached folder entry costs a few microseconds, where the thread
      // pool's round trip costs six times as much CPU (a run history grid revalidates 30 records;
      // docs/decisions.md, "Not re-parsing on every list?").
      let st: Stamp | undefined;
      try {
        st = statSync(path, { bigint: true, throwIfNoEntry: false });
      } catch {
        st = undefined;
      }
      if (st && same(cached, st)) return cached.text;
      this.#entries.delete(path);
    }
    const fh = await open(path, 'r');
    try {
      const st = await fh.stat({ bigint: true });
      const text = await fh.readFile('utf8');
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
      return text;
    } finally {
      await fh.close();
    }
  }
}
