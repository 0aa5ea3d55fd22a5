import fs from 'node:fs';
import { promisify } from 'node:util';

/** The bytes of `buffers` after the first `n`, or undefined when `n` covers them all. */
export const remainderAfter = (
  buffers: readonly Uint8Array[],
  n: number,
): Uint8Array | undefined => {
  let skip = n;
  const rest: Uint8Array[] = [];
  for (const b of buffers) {
    if (skip >= b.byteLength) skip -= b.byteLength;
    else {
      rest.push(skip === 0 ? b : b.subarray(skip));
      skip = 0;
    }
  }
  return rest.length === 0 ? undefined : Buffer.concat(rest);
};

/**
 * The store's seam over the file system for durability (tests spy on it to see the order of
 * renames and syncs). File-descriptor calls on the hot path of a run (record saves, index appends), as promises over
 * node's callback API: about a third less event-loop time per call than `fs.promises`, whose
 * FileHandle objects cost more JavaScript than the system calls they wrap (measured: 110 vs
 * 150 microseconds per atomic write on the 2-core machine).
 */
export const fd = {
  open: promisify(fs.open) as (path: string, flags: string) => Promise<number>,
  /** Writes all of `data` at the file's position (appends for an `a` descriptor). */
  write: promisify(fs.writeFile) as (fd: number, data: string | Uint8Array) => Promise<void>,
  /**
   * Writes all of `buffers`, in order, at the file's position: one system call for many parts.
   * Rejects when the file system takes less than all of it (a full disk, a file size limit):
   * libuv then reports the bytes written without an error, so the rest is written once more
   * through `write`, which either completes it or rejects with the errno (`ENOSPC`, `EFBIG`).
   */
  writev: (f: number, buffers: readonly Uint8Array[]): Promise<void> =>
    new Promise<number>((resolve, reject) => {
      fs.writev(f, buffers, (e, n) => (e ? reject(e) : resolve(n)));
    }).then((n) => {
      const rest = remainderAfter(buffers, n);
      return rest === undefined ? undefined : fd.write(f, rest);
    }),
  sync: promisify(fs.fsync),
  datasync: promisify(fs.fdatasync),
  stat: promisify(fs.fstat) as (fd: number) => Promise<fs.Stats>,
  close: promisify(fs.close),
  rename: promisify(fs.rename),
  /**
   * Makes the entries of directory `dir` durable (a rename into it, a new file): an fsync of the
   * directory itself, as a file's fsync does not cover its name.
   */
  syncDir: async (dir: string): Promise<void> => {
    const d = await fd.open(dir, 'r');
    try {
      await fd.sync(d);
    } finally {
      await fd.close(d);
    }
  },
  /** Flushes a file written through another descriptor (closed meanwhile) to disk. */
  syncFile: async (path: string): Promise<void> => {
    const f = await fd.open(path, 'r');
    try {
      await fd.sync(f);
    } finally {
      await fd.close(f);
    }
  },
};
