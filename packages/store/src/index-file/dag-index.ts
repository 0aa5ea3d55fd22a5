import { read, stat as statCb } from 'node:fs';
import { open, stat, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { promisify } from 'node:util';
import { RunStatus } from '@trellis/core';
import { writeFileAtomic } from '../fs/atomic-write.js';
import { fd } from '../fs/fd.js';
import { errnoOf, isMissing, messageOf } from '../fs/fs-errors.js';
import { newestFirst, toIndexedRun, type IndexedRun } from '../runs/run-filter.js';
import { sameSummaryFields, type RunSummary } from '../runs/run-summary.js';
import { decodeIndexLine, encodeIndexLine, keyOfSummary, type IndexLine } from './index-line.js';

/** What a `DagIndex` needs from the store. */
export interface DagIndexDeps {
  /** Path of this DAG's `index.jsonl`. */
  readonly path: string;
  /** Reads every status file of the DAG (children included); undefined when the DAG has no folder. */
  readonly scan: () => Promise<RunSummary[] | undefined>;
  readonly warn: (message: string) => void;
  /** Compact when the file holds more than this many lines per live run. */
  readonly compactFactor: number;
  /** Never compact a file of fewer lines than this. */
  readonly compactMinLines: number;
  /** Age after which another process's compaction lock counts as abandoned, in ms. */
  readonly lockStaleMs: number;
  readonly now: () => Date;
}

const statP = promisify(statCb);
const readP = (
  file: number,
  buf: Buffer,
  offset: number,
  length: number,
  position: number,
): Promise<number> =>
  new Promise((resolve, reject) =>
    read(file, buf, offset, length, position, (e, n) => (e ? reject(e) : resolve(n))),
  );

const READ_CHUNK_BYTES = 1 << 20;
const NEWLINE = 0x0a;
const MAX_APPEND_ATTEMPTS = 5;
/** An index file with no append for this long is closed. */
const APPEND_IDLE_MS = 1000;

/**
 * The in-memory view of one DAG's append-only `index.jsonl` (one summary line per change; the
 * line with the highest revision per key wins; `del` lines remove a key). Loaded lazily; before
 * every answer it checks the file and reads only the bytes appended since (by this or another
 * process sharing the store). Rebuilt from the status files when missing or unreadable, and
 * compacted when it holds more than `compactFactor` lines per live run.
 *
 * Every method runs after the previous one finished (a promise chain), so a sync never sees a
 * half-applied append of this process.
 */
export class DagIndex {
  readonly #deps: DagIndexDeps;
  readonly #entries = new Map<string, IndexedRun>();
  /** Newest first; undefined when an entry changed since it was sorted. */
  #sorted: IndexedRun[] | undefined;
  #loaded = false;
  /** Inode of the file the entries came from: a compaction or rebuild replaces the file. */
  #ino = -1;
  /** Bytes consumed: always just after a newline, so a torn last line is read again later. */
  #offset = 0;
  /** Complete lines read from the current file (the compaction trigger). */
  #lines = 0;
  #chain: Promise<void> = Promise.resolve();
  /** The file open for appends (see `#closeWhenIdle`), with the inode it was opened as. */
  #appendFile: { fd: number; ino: number } | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  /** Puts waiting for the next write (group commit). */
  readonly #pending: { summary: RunSummary; resolve: () => void; reject: (e: unknown) => void }[] =
    [];

  constructor(deps: DagIndexDeps) {
    this.#deps = deps;
  }

  /** Every indexed run (children included), newest first, after reading new lines. */
  entries(): Promise<readonly IndexedRun[]> {
    return this.#serial(async () => {
      await this.#sync();
      this.#sorted ??= [...this.#entries.values()].sort(newestFirst);
      return this.#sorted;
    });
  }

  /** The indexed summary of one key, after reading new lines. */
  get(key: string): Promise<RunSummary | undefined> {
    return this.#serial(async () => {
      await this.#sync();
      return this.#entries.get(key)?.summary;
    });
  }

  /**
   * Records `summary` unless the index already holds the same fields (revision aside). Puts that
   * arrive while a write is in flight are written together in the next one (group commit), so
   * many runs of one DAG finishing at once cost one append, not one each.
   */
  put(summary: RunSummary): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ summary, resolve, reject });
      if (this.#pending.length === 1) void this.#serial(() => this.#flushPuts());
    });
  }

  async #flushPuts(): Promise<void> {
    const batch = this.#pending.splice(0);
    try {
      const latest = new Map<string, RunSummary>();
      for (const { summary } of batch) latest.set(keyOfSummary(summary), summary);
      // Nothing new to say (a save that changed no summary field): no need to read the file.
      if (this.#loaded && [...latest].every(([key, s]) => this.#holds(key, s))) {
        batch.forEach((p) => p.resolve());
        return;
      }
      await this.#sync();
      const lines: IndexLine[] = [];
      for (const [key, summary] of latest) {
        const current = this.#entries.get(key)?.summary;
        if (current !== undefined && sameSummaryFields(current, summary)) continue;
        if (current !== undefined && current.revision > summary.revision) continue;
        lines.push({ kind: 'put', key, summary });
      }
      if (lines.length > 0) {
        // Synced to disk when a line records a state its record also syncs (queued, final).
        const durable = lines.some(
          (l) =>
            l.kind === 'put' &&
            l.summary.status !== RunStatus.Running &&
            l.summary.status !== RunStatus.NotStarted,
        );
        await this.#append(lines.map(encodeIndexLine).join(''), lines.length, durable);
        lines.forEach((l) => this.#apply(l));
        await this.#maybeCompact();
      }
      batch.forEach((p) => p.resolve());
    } catch (e) {
      batch.forEach((p) => p.reject(e));
    }
  }

  /** True when the entry of `key` already has the fields of `summary` (revision aside). */
  #holds(key: string, summary: RunSummary): boolean {
    const current = this.#entries.get(key)?.summary;
    return current !== undefined && sameSummaryFields(current, summary);
  }

  /** Removes runs from the index (a deleted run and its children). */
  remove(keys: readonly string[]): Promise<void> {
    return this.#serial(async () => {
      await this.#sync();
      const present = keys.filter((k) => this.#entries.has(k));
      if (present.length === 0) return;
      const lines = present.map((key): IndexLine => ({ kind: 'del', key }));
      await this.#append(lines.map(encodeIndexLine).join(''), lines.length);
      lines.forEach((l) => this.#apply(l));
      await this.#maybeCompact();
    });
  }

  #serial<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#chain.then(task);
    this.#chain = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  #apply(line: IndexLine): void {
    if (line.kind === 'del') {
      if (this.#entries.delete(line.key)) this.#sorted = undefined;
      return;
    }
    const current = this.#entries.get(line.key);
    // Latest line wins, unless it carries an older revision (a duplicate re-appended after a
    // concurrent compaction can land after a newer line).
    if (current !== undefined && current.summary.revision > line.summary.revision) return;
    this.#entries.set(line.key, toIndexedRun(line.summary));
    this.#sorted = undefined;
  }

  #reset(): void {
    this.#entries.clear();
    this.#sorted = undefined;
    this.#offset = 0;
    this.#lines = 0;
    this.#ino = -1;
    this.#loaded = false;
  }

  async #sync(): Promise<void> {
    let file: number;
    try {
      const st = await statP(this.#deps.path);
      if (this.#loaded && st.ino === this.#ino && st.size === this.#offset) return;
      file = await fd.open(this.#deps.path, 'r');
    } catch (e) {
      if (!isMissing(e)) throw e;
      await this.#rebuild(undefined);
      return;
    }
    let badLine: string | undefined;
    try {
      // fstat, not the path's stat: the file may have been replaced between the two.
      const st = await fd.stat(file);
      if (!this.#loaded || st.ino !== this.#ino || st.size < this.#offset) {
        this.#reset();
        this.#ino = st.ino;
      }
      if (st.size > this.#offset) badLine = await this.#readFrom(file, st.size);
      this.#loaded = true;
    } finally {
      await fd.close(file);
    }
    if (badLine !== undefined) await this.#rebuild(`unreadable line ${JSON.stringify(badLine)}`);
  }

  /** Applies the complete lines in [offset, size); returns the first unreadable line, if any. */
  async #readFrom(file: number, size: number): Promise<string | undefined> {
    const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, size - this.#offset));
    let carry = Buffer.alloc(0);
    let pos = this.#offset;
    while (pos < size) {
      const bytesRead = await readP(file, buf, 0, Math.min(buf.length, size - pos), pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      const data =
        carry.length === 0
          ? buf.subarray(0, bytesRead)
          : Buffer.concat([carry, buf.subarray(0, bytesRead)]);
      const last = data.lastIndexOf(NEWLINE);
      if (last === -1) {
        carry = Buffer.from(data);
        continue;
      }
      for (const text of data.toString('utf8', 0, last).split('\n')) {
        this.#lines++;
        const line = decodeIndexLine(text);
        if (line === undefined) {
          if (text.trim() === '') continue;
          return text.slice(0, 80);
        }
        this.#apply(line);
      }
      this.#offset += last + 1; // `data` starts at the old offset (the carried fragment first)
      carry = Buffer.from(data.subarray(last + 1));
    }
    return undefined;
  }

  async #rebuild(reason: string | undefined): Promise<void> {
    const summaries = await this.#deps.scan();
    this.#reset();
    this.#loaded = true;
    if (summaries === undefined) return; // no folder for this DAG: nothing to index yet
    const lines = summaries.map((summary): IndexLine => ({
      kind: 'put',
      key: keyOfSummary(summary),
      summary,
    }));
    lines.forEach((l) => this.#apply(l));
    const text = lines.map(encodeIndexLine).join('');
    await writeFileAtomic(this.#deps.path, text);
    this.#ino = (await stat(this.#deps.path)).ino;
    this.#offset = Buffer.byteLength(text);
    this.#lines = lines.length;
    if (reason !== undefined)
      this.#deps.warn(
        `run index ${this.#deps.path} was rebuilt from ${summaries.length} status files: ${reason}`,
      );
  }

  /**
   * Appends `count` complete lines. Another process may compact or rebuild the file meanwhile
   * (rename over it): when the file we wrote to is no longer the one at the path, the lines are
   * written again to the new file. A duplicate is harmless (same key, same revision). When the
   * lines landed right at the end of what this index had read (nobody else appended), they are
   * counted as read, so the next answer does not read them back.
   */
  async #append(text: string, count: number, durable = true): Promise<void> {
    for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt++) {
      const file = (this.#appendFile ??= await this.#openForAppend());
      try {
        await fd.write(file.fd, text);
        if (durable) await fd.datasync(file.fd);
      } catch (e) {
        await this.#closeAppendFile();
        throw e;
      }
      const current = await statP(this.#deps.path).catch((e: unknown) => {
        if (isMissing(e)) return undefined;
        throw e;
      });
      if (current?.ino !== file.ino) {
        await this.#closeAppendFile(); // replaced meanwhile: write to the file now at the path
        continue;
      }
      const bytes = Buffer.byteLength(text);
      if (this.#loaded && file.ino === this.#ino && current.size === this.#offset + bytes) {
        this.#offset += bytes;
        this.#lines += count;
      }
      this.#closeWhenIdle();
      return;
    }
    this.#deps.warn(`run index ${this.#deps.path} kept being replaced while appending; it may lag`);
  }

  async #openForAppend(): Promise<{ fd: number; ino: number }> {
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
    this.#idleTimer = setTimeout(
      () => void this.#serial(() => this.#closeAppendFile()),
      APPEND_IDLE_MS,
    );
    this.#idleTimer.unref();
  }

  async #closeAppendFile(): Promise<void> {
    clearTimeout(this.#idleTimer);
    const file = this.#appendFile;
    this.#appendFile = undefined;
    if (file !== undefined) await fd.close(file.fd).catch(() => undefined);
  }

  async #maybeCompact(): Promise<void> {
    const { compactFactor, compactMinLines } = this.#deps;
    if (this.#lines < compactMinLines) return;
    if (this.#lines <= compactFactor * Math.max(1, this.#entries.size)) return;
    await this.#compact();
  }

  /**
   * Rewrites the file with one line per live run. A lock file keeps two processes from
   * compacting at once (an abandoned lock is removed after `lockStaleMs`). Lines another process
   * appended to the old file after our last read are copied to the new file; a writer that
   * appended to the old file later sees the inode change and appends again.
   */
  async #compact(): Promise<void> {
    const lockPath = `${this.#deps.path}.lock`;
    try {
      await (await open(lockPath, 'wx')).close();
    } catch (e) {
      if (errnoOf(e) !== 'EEXIST') throw e;
      const st = await stat(lockPath).catch(() => undefined);
      if (st !== undefined && this.#deps.now().getTime() - st.mtimeMs > this.#deps.lockStaleMs)
        await unlink(lockPath).catch(() => undefined);
      return;
    }
    try {
      await this.#sync();
      const old = await open(this.#deps.path, 'r');
      try {
        if ((await old.stat()).ino !== this.#ino) return;
        const live = [...this.#entries.values()].sort((a, b) => newestFirst(b, a));
        const text = live
          .map((r) =>
            encodeIndexLine({ kind: 'put', key: keyOfSummary(r.summary), summary: r.summary }),
          )
          .join('');
        await writeFileAtomic(this.#deps.path, text);
        const late = await readCompleteLines(old, this.#offset);
        if (late !== '') await this.#append(late, 0); // the index is reset and read again below
      } finally {
        await old.close();
      }
      this.#reset(); // the next answer reads the compacted file from the start
    } catch (e) {
      this.#deps.warn(`run index ${this.#deps.path} could not be compacted: ${messageOf(e)}`);
    } finally {
      await unlink(lockPath).catch(() => undefined);
    }
  }
}

/** The complete lines of a file from `offset` on (a trailing fragment without newline is left). */
const readCompleteLines = async (fh: FileHandle, offset: number): Promise<string> => {
  const { size } = await fh.stat();
  if (size <= offset) return '';
  const buf = Buffer.alloc(size - offset);
  const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
  const last = buf.subarray(0, bytesRead).lastIndexOf(NEWLINE);
  return last === -1 ? '' : buf.toString('utf8', 0, last + 1);
};
