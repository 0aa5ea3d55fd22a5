import {
  closeSync,
  fsync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { LogChunk, StatusReport } from '@trellis/coordinator/client';

/** One message of the outbox: a run's status report or a chunk of one of its log files. */
export type OutboxMessage =
  | { readonly kind: 'status'; readonly report: StatusReport; readonly final: boolean }
  | { readonly kind: 'log'; readonly chunk: LogChunk };

/** A message kept in the journal until the coordinator took it. */
export interface JournalEntry {
  /** Journal order (increasing over the worker's life, across restarts). */
  readonly n: number;
  /** The outbox lane (run) it belongs to. */
  readonly runKey: string;
  readonly message: OutboxMessage;
}

/**
 * The outbox directory of a worker under `home`: `worker-outbox/<id>`, the id escaped so that any
 * id is one safe directory name. A worker started again with the same id replays it.
 */
export const outboxDirOf = (home: string, workerId: string): string =>
  join(
    home,
    'worker-outbox',
    workerId.replace(/[^A-Za-z0-9_-]/g, (c) => `%${c.codePointAt(0)?.toString(16) ?? ''}`),
  );

/** A message's place in the journal file. */
interface Span {
  readonly at: number;
  readonly bytes: number;
}

/** The journal file in the outbox directory. */
const FILE = 'outbox.jsonl';
/** Holds the pid of the process using the directory. */
const LOCK = 'outbox.lock';
/** The file is rewritten once it is this large and at least three quarters are acknowledged. */
const COMPACT_AT_BYTES = 1024 * 1024;

type Line =
  | { n: number; k: string; f: boolean; s: StatusReport }
  | { n: number; k: string; l: Omit<LogChunk, 'data'> & { data: string } }
  | { a: number[] };

const toLine = (e: JournalEntry): string => {
  const m = e.message;
  const line: Line =
    m.kind === 'status'
      ? { n: e.n, k: e.runKey, f: m.final, s: m.report }
      : { n: e.n, k: e.runKey, l: { ...m.chunk, data: m.chunk.data.toString('base64') } };
  return `${JSON.stringify(line)}\n`;
};

const toEntry = (line: Line): JournalEntry | undefined => {
  if ('s' in line) return { n: line.n, runKey: line.k, message: statusOf(line) };
  if ('l' in line) {
    const chunk = { ...line.l, data: Buffer.from(line.l.data, 'base64') };
    return { n: line.n, runKey: line.k, message: { kind: 'log', chunk } };
  }
  return undefined;
};

const statusOf = (line: { f: boolean; s: StatusReport }): OutboxMessage => ({
  kind: 'status',
  report: line.s,
  final: line.f,
});

/**
 * The worker outbox on disk (docs/decisions.md, "Worker outbox"): an append-only file of JSON
 * lines, one per message, and acknowledgement lines naming the messages the coordinator took.
 * Writes are synchronous: a message is in the file, in order, before the call returns (a crash of
 * the process loses nothing). A status report is fsynced before it is sent (`sync`, awaited by the
 * outbox before each report goes): one fsync, off the event loop, covers every line written
 * before it, so the reports a later one replaced and the log chunks between cost none.
 * Acknowledged lines are compacted away.
 */
export class OutboxJournal {
  readonly #dir: string;
  #fd = -1;
  /** Where each message not yet acknowledged sits in the file, by `n` (in `n` order). */
  readonly #live = new Map<number, Span>();
  #liveBytes = 0;
  #fileBytes = 0;
  #lastN = 0;
  /** Lines written, and how many of them the last finished fsync covers. */
  #written = 0;
  #synced = 0;
  /** Durable lines were written since the last fsync began. */
  #dirty = false;
  #syncing: Promise<void> | undefined;

  private constructor(dir: string) {
    this.#dir = dir;
  }

  /**
   * Opens (creating) the journal in `dir` and returns the messages a previous process left
   * unacknowledged, in their original order. Throws when another live process uses `dir`.
   */
  static open(dir: string): { journal: OutboxJournal; pending: JournalEntry[] } {
    mkdirSync(dir, { recursive: true });
    takeLock(dir);
    const pending = readPending(join(dir, FILE));
    const journal = new OutboxJournal(dir);
    journal.#rewrite(pending.map((e) => [e.n, Buffer.from(toLine(e))]));
    for (const e of pending) journal.#lastN = Math.max(journal.#lastN, e.n);
    return { journal, pending };
  }

  /** Bytes of messages written and not yet acknowledged. */
  get liveBytes(): number {
    return this.#liveBytes;
  }

  /** True after `close`. */
  get closed(): boolean {
    return this.#fd < 0;
  }

  /** The `n` of the latest message written (0 before any). */
  get lastN(): number {
    return this.#lastN;
  }

  /**
   * Writes a message; returns its `n`. A `durable` one (a status report) is fsynced by the next
   * `sync`, which the outbox awaits before sending it.
   */
  append(runKey: string, message: OutboxMessage, durable: boolean): number {
    const n = ++this.#lastN;
    const span = this.#write(toLine({ n, runKey, message }));
    if (durable) this.#dirty = true;
    this.#live.set(n, span);
    this.#liveBytes += span.bytes;
    return n;
  }

  /** Marks messages as taken by the coordinator (or given up); compacts the file when due. */
  ack(ns: readonly number[]): void {
    if (this.#fd < 0) return; // closed: the messages go again after a restart
    const known = ns.filter((n) => this.#live.has(n));
    if (known.length === 0) return;
    for (const n of known) {
      this.#liveBytes -= this.#live.get(n)?.bytes ?? 0;
      this.#live.delete(n);
    }
    if (this.#live.size === 0) {
      ftruncateSync(this.#fd, 0);
      this.#fileBytes = 0;
      return;
    }
    this.#write(`${JSON.stringify({ a: known })}\n`);
    if (this.#fileBytes >= COMPACT_AT_BYTES && this.#fileBytes > 4 * this.#liveBytes)
      this.#compact();
  }

  /**
   * Resolves once every durable message written so far is on disk (fsync, in the thread pool:
   * the event loop goes on meanwhile). Callers at the same time share one fsync; one that wrote
   * after an fsync began waits for the next. Resolves at once when nothing is due, or once closed.
   */
  async sync(): Promise<void> {
    const target = this.#written;
    while (this.#synced < target && this.#fd >= 0 && (this.#dirty || this.#syncing)) {
      if (this.#syncing) {
        await this.#syncing;
        continue;
      }
      const fd = this.#fd;
      const upTo = this.#written;
      this.#dirty = false;
      this.#syncing = new Promise<void>((resolve, reject) => {
        fsync(fd, (e) => {
          this.#syncing = undefined;
          // a file closed or rewritten meanwhile: close and the rewrite fsynced it
          if (e && fd === this.#fd) {
            this.#dirty = true;
            reject(e);
            return;
          }
          this.#synced = Math.max(this.#synced, upTo);
          resolve();
        });
      });
      await this.#syncing;
    }
  }

  /** Closes the file (fsynced first when due) and frees the directory for the next process. */
  close(): void {
    if (this.#fd < 0) return;
    if (this.#dirty) fsyncSync(this.#fd);
    closeSync(this.#fd);
    this.#fd = -1;
    rmSync(join(this.#dir, LOCK), { force: true });
  }

  #write(text: string): Span {
    const bytes = Buffer.from(text);
    writeSync(this.#fd, bytes);
    this.#written += 1;
    const span = { at: this.#fileBytes, bytes: bytes.length };
    this.#fileBytes += bytes.length;
    return span;
  }

  /**
   * Rewrites the file with the pending messages only, copied from where they sit in it. Done once
   * the file is four times their size, so a compaction copies at most a quarter of the file.
   */
  #compact(): void {
    const kept: [number, Buffer][] = [];
    for (const [n, span] of this.#live) {
      const line = Buffer.alloc(span.bytes);
      readSync(this.#fd, line, 0, span.bytes, span.at);
      kept.push([n, line]);
    }
    this.#rewrite(kept);
  }

  /** Replaces the file by one holding `lines` (via a fsynced temp file and a rename). */
  #rewrite(lines: readonly (readonly [number, Buffer])[]): void {
    const path = join(this.#dir, FILE);
    const tmp = `${path}.tmp`;
    const fd = openSync(tmp, 'w');
    const spans = lines.map(([n, line]) => [n, line, writeSync(fd, line)] as const);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, path);
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = openSync(path, 'a+');
    this.#synced = this.#written; // the new file was fsynced before the rename
    this.#dirty = false;
    this.#live.clear();
    this.#liveBytes = 0;
    this.#fileBytes = 0;
    for (const [n, line, written] of spans) {
      if (written !== line.length) throw new Error(`short write to ${tmp}`);
      this.#live.set(n, { at: this.#fileBytes, bytes: line.length });
      this.#fileBytes += line.length;
    }
    this.#liveBytes = this.#fileBytes;
  }
}

/** The unacknowledged messages of a journal file, in order (none when it does not exist). */
const readPending = (path: string): JournalEntry[] => {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const entries = new Map<number, JournalEntry>();
  for (const raw of text.split('\n')) {
    if (raw === '') continue;
    let line: Line;
    try {
      line = JSON.parse(raw) as Line;
    } catch {
      continue; // a line cut short by a crash: its message was never sent
    }
    if ('a' in line) for (const n of line.a) entries.delete(n);
    else {
      const e = toEntry(line);
      if (e) entries.set(e.n, e);
    }
  }
  return [...entries.values()].sort((a, b) => a.n - b.n);
};

/** Records this process as the directory's user; refuses when another live process is. */
const takeLock = (dir: string): void => {
  const path = join(dir, LOCK);
  try {
    writeFileSync(path, String(process.pid), { flag: 'wx' });
    return;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const pid = Number(readFileSync(path, 'utf8').trim());
  if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid))
    throw new Error(
      `the outbox directory ${dir} is in use by process ${pid}: give each worker sharing a home directory its own worker id (--id or SVC_WORKER_ID)`,
    );
  writeFileSync(path, String(process.pid));
};

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};
