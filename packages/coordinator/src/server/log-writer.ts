import { mkdir, open, stat } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';

/**
 * Applies log chunks from workers to files under `logDir`, each at the byte offset it names.
 * Bytes below a file's current size were applied before (a batch sent again after a reconnect)
 * and are skipped, so every byte lands exactly once and in order.
 */
export class LogWriter {
  readonly #root: string;
  /** Known sizes, so most chunks need no stat. */
  readonly #sizes = new Map<string, number>();
  readonly #warn: (m: string) => void;

  constructor(logDir: string, warn: (m: string) => void) {
    this.#root = resolve(logDir);
    this.#warn = warn;
  }

  /** True when `path` is a file under the log directory (workers name files by path). */
  isInside(path: string): boolean {
    const abs = resolve(path);
    return abs.startsWith(this.#root + sep);
  }

  /** Appends the part of `data` at `offset` not yet in the file; returns the file's new size. */
  async apply(path: string, offset: number, data: Buffer): Promise<number> {
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
    const fh = await open(path, 'a');
    try {
      await fh.write(part);
    } finally {
      await fh.close();
    }
    const newSize = size + part.length;
    this.#sizes.set(path, newSize);
    return newSize;
  }

  /** Forgets cached sizes of files of a finished run (they are re-read if written again). */
  forgetUnder(dir: string): void {
    for (const p of this.#sizes.keys()) if (p.startsWith(dir)) this.#sizes.delete(p);
  }
}
