import { readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import {
  cachedDagFile,
  type CachedDagFile,
  type DagFileParts,
  type ParsedDagCache,
} from './parsed-dag-cache.js';

/** Bumped when the parse or the entry's shape changes: an index of another version is ignored. */
const INDEX_VERSION = 1;

interface IndexFile {
  readonly version: number;
  readonly entries: readonly (Omit<DagFileParts, 'refs'> & { refs: [string, boolean][] })[];
}

/**
 * The parsed DAG files saved by the last server, so a start reads one JSON file instead of
 * parsing every YAML file (docs/architecture.md, "DAG index"). Each entry is kept only while its
 * file's stamp (mtime, size, inode) is unchanged; the caller checks that. A missing, unreadable
 * or foreign index is no index: everything is parsed, as without one.
 */
const readDagIndex = (path: string): CachedDagFile[] => {
  let raw: IndexFile;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8')) as IndexFile;
  } catch {
    return [];
  }
  if (raw?.version !== INDEX_VERSION) return [];
  const entries: IndexFile['entries'] = Array.isArray(raw.entries) ? raw.entries : [];
  return entries.map((e) => cachedDagFile({ ...e, refs: new Map(e.refs) }));
};

/** Writes the index atomically (a temporary file renamed over it); failures are the caller's. */
const writeDagIndex = async (path: string, entries: Iterable<CachedDagFile>): Promise<void> => {
  const out: IndexFile = {
    version: INDEX_VERSION,
    entries: [...entries].map((e) => ({
      path: e.path,
      fileName: e.fileName,
      stamp: e.stamp,
      text: e.text,
      file: e.file,
      errors: e.errors,
      refs: [...e.refs],
    })),
  };
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, JSON.stringify(out));
  await rename(temp, path);
};

/** Keeps a parse cache and its index file in step: read once, rewritten after changes. */
export class DagIndexKeeper {
  #loaded = false;
  #writing = false;
  #again = false;

  constructor(
    private readonly path: string,
    private readonly cache: ParsedDagCache,
  ) {}

  /** Seeds the cache from the index file, the first time only. */
  load(): void {
    if (this.#loaded) return;
    this.#loaded = true;
    this.cache.seed(readDagIndex(this.path));
  }

  /** Rewrites the index in the background when the cache changed; one write at a time. */
  saveIfChanged(): void {
    if (!this.cache.takeChanged()) return;
    if (this.#writing) {
      this.#again = true;
      return;
    }
    this.#writing = true;
    // A failed write only costs the next start its parses; the index is a cache.
    void writeDagIndex(this.path, this.cache.all())
      .catch(() => undefined)
      .finally(() => {
        this.#writing = false;
        if (this.#again) {
          this.#again = false;
          this.cache.markChanged();
          this.saveIfChanged();
        }
      });
  }
}
