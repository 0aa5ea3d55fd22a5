import type { Stats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { FILE_NAME_PATTERN, nextRunOf, type DagFile, type parseDagFile } from '@trellis/spec';

/** The parser the cache calls; injectable so tests can count parses. */
export type ParseDagFn = typeof parseDagFile;

/** What identifies one version of a file: a rename-over gives a new inode, an edit a new mtime. */
export interface FileStamp {
  readonly mtimeMs: number;
  readonly size: number;
  readonly ino: number;
}

export const stampOf = (s: Stats): FileStamp => ({ mtimeMs: s.mtimeMs, size: s.size, ino: s.ino });

const sameStamp = (a: FileStamp, b: FileStamp): boolean =>
  a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino;

/** One parsed DAG file, with the keys the list filters and sorts by. */
export interface CachedDagFile {
  readonly path: string;
  /** The API's `fileName`: the entry name without `.yaml` / `.yml`. */
  readonly fileName: string;
  readonly stamp: FileStamp;
  readonly text: string;
  readonly file: DagFile;
  /** Every problem of the file, plus one when its name cannot be used as a `fileName`. */
  readonly errors: readonly string[];
  /** Child-DAG existence answers given while parsing; a changed answer means a re-parse. */
  readonly refs: ReadonlyMap<string, boolean>;
  /** Lower-cased DAG name, file name, tags and text (the search's prefilter). */
  readonly lower: {
    readonly name: string;
    readonly fileName: string;
    readonly tags: ReadonlySet<string>;
    readonly text: string;
  };
  /** Memo of the next start time: valid while `fromMs <= now < nextMs`. */
  nextRunMemo?: { readonly fromMs: number; readonly nextMs: number | undefined };
}

/**
 * The next start of a cached DAG at `now`. No fire time lies between the memo's `from` and its
 * `next`, so the memo answers every `now` in that window; a clock going backwards recomputes.
 */
export const nextRunAt = (f: CachedDagFile, now: Date): Date | undefined => {
  const nowMs = now.getTime();
  const m = f.nextRunMemo;
  if (m && m.fromMs <= nowMs && (m.nextMs === undefined || nowMs < m.nextMs))
    return m.nextMs === undefined ? undefined : new Date(m.nextMs);
  const next = nextRunOf(f.file.main.dag.schedule.start, now);
  f.nextRunMemo = { fromMs: nowMs, nextMs: next?.getTime() };
  return next;
};

/**
 * Parsed DAG files by path, re-parsed only when the file's stamp changes or a child DAG it names
 * appears or disappears (docs/architecture.md, "Storage": list endpoints must not re-read every file).
 */
export class ParsedDagCache {
  readonly #entries = new Map<string, CachedDagFile>();
  /** Set when an entry was added or dropped since {@link takeChanged} last ran. */
  #changed = false;

  constructor(private readonly parse: ParseDagFn) {}

  /**
   * The file at `path` as of `stamp` (taken by the caller just before). `exists` answers child
   * DAG references. Errors: the file system's, when the file cannot be read.
   */
  async get(
    path: string,
    fileName: string,
    stamp: FileStamp,
    exists: (ref: string) => boolean,
  ): Promise<CachedDagFile> {
    return this.peek(path, stamp, exists) ?? this.load(path, fileName, stamp, exists);
  }

  /** The cached file when it is still current (same stamp, same child-DAG answers); no I/O. */
  peek(
    path: string,
    stamp: FileStamp,
    exists: (ref: string) => boolean,
  ): CachedDagFile | undefined {
    const hit = this.#entries.get(path);
    return hit && sameStamp(hit.stamp, stamp) && refsHold(hit.refs, exists) ? hit : undefined;
  }

  /** Reads and parses the file, replacing its entry. Errors: the file system's. */
  async load(
    path: string,
    fileName: string,
    stamp: FileStamp,
    exists: (ref: string) => boolean,
  ): Promise<CachedDagFile> {
    // Read after the stat: a write in between leaves a newer stamp, so the next call re-parses.
    const text = await readFile(path, 'utf8');
    const entry = this.#build(path, fileName, stamp, text, exists);
    this.#entries.set(path, entry);
    this.#changed = true;
    return entry;
  }

  /** Takes entries read back from the index file; each is still checked by its stamp. */
  seed(entries: readonly CachedDagFile[]): void {
    for (const e of entries) if (!this.#entries.has(e.path)) this.#entries.set(e.path, e);
  }

  /** Every entry, for the index file. */
  all(): IterableIterator<CachedDagFile> {
    return this.#entries.values();
  }

  markChanged(): void {
    this.#changed = true;
  }

  /** Whether entries changed since the last call (the index file is then rewritten). */
  takeChanged(): boolean {
    const c = this.#changed;
    this.#changed = false;
    return c;
  }

  /** Parses `text` as the file `path` would be parsed, without caching (validation). */
  parseAs(
    path: string,
    fileName: string,
    text: string,
    exists: (ref: string) => boolean,
  ): CachedDagFile {
    return this.#build(path, fileName, { mtimeMs: -1, size: -1, ino: -1 }, text, exists);
  }

  forget(path: string): void {
    if (this.#entries.delete(path)) this.#changed = true;
  }

  /** Drops the entries of files that are gone. */
  retainOnly(paths: ReadonlySet<string>): void {
    for (const p of this.#entries.keys()) if (!paths.has(p)) this.forget(p);
  }

  #build(
    path: string,
    fileName: string,
    stamp: FileStamp,
    text: string,
    exists: (ref: string) => boolean,
  ): CachedDagFile {
    const refs = new Map<string, boolean>();
    const file = this.parse(text, {
      location: path,
      dagExists: (ref) => {
        const found = exists(ref);
        refs.set(ref, found);
        return found;
      },
    });
    const errors = FILE_NAME_PATTERN.test(fileName)
      ? file.errors
      : [
          ...file.errors,
          `file name ${JSON.stringify(fileName)} cannot be used in the API: rename the file to letters, digits, "_" and "-" only`,
        ];
    return cachedDagFile({ path, fileName, stamp, text, file, errors, refs });
  }
}

/** What a cache entry is made of: a parse, or the same read back from the index file. */
export type DagFileParts = Pick<
  CachedDagFile,
  'path' | 'fileName' | 'stamp' | 'text' | 'file' | 'errors' | 'refs'
>;

/** A cache entry with its lower-cased keys computed. */
export const cachedDagFile = (p: DagFileParts): CachedDagFile => {
  const dag = p.file.main.dag;
  return {
    ...p,
    lower: {
      name: dag.name.toLowerCase(),
      fileName: p.fileName.toLowerCase(),
      tags: new Set(dag.tags.map((t) => t.toLowerCase())),
      text: p.text.toLowerCase(),
    },
  };
};

const refsHold = (
  refs: ReadonlyMap<string, boolean>,
  exists: (ref: string) => boolean,
): boolean => {
  for (const [ref, found] of refs) if (exists(ref) !== found) return false;
  return true;
};
