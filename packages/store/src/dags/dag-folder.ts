import { readdirSync, statSync, type Dirent } from 'node:fs';
import { join, sep } from 'node:path';
import { badRequest, notFound } from '@trellis/core';
import { FILE_NAME_PATTERN, dagNameProblem } from '@trellis/spec';
import {
  ParsedDagCache,
  stampOf,
  type CachedDagFile,
  type ParseDagFn,
} from './parsed-dag-cache.js';
import {
  DAG_FILE_EXTENSIONS,
  childDagExists,
  dagFileNameOf,
  errnoOf,
  messageOf,
} from './dag-file-writes.js';
import { DagIndexKeeper } from './dag-index-file.js';
import { DirWatch } from './dir-watch.js';

/** One look at the folder: its DAG files in file-name order, and the problems reading it. */
interface FolderScan {
  readonly files: CachedDagFile[];
  readonly errors: string[];
}

/** How a {@link DagFolder} keeps its view current. */
interface DagFolderOptions {
  /**
   * Watch the folder and answer from memory between changes (a long-running server); else every
   * scan reads the folder. @default false
   */
  readonly watch?: boolean;
  /** File that keeps the parsed files across restarts (keyed by each file's stamp). */
  readonly indexFile?: string;
}

/** The in-memory view of a watched folder, valid until the next change. */
interface Snapshot {
  readonly scan: Promise<FolderScan>;
  byName?: ReadonlyMap<string, CachedDagFile>;
  tags?: readonly string[];
}

/** Resolves after the event loop went through one poll phase (two check phases from now). */
const throughPollPhase = (): Promise<void> =>
  new Promise((r) => setImmediate(() => setImmediate(r)));

/** File names whose details path `GET /dags/<name>` is another endpoint. */
const RESERVED_FILE_NAMES = new Set(['search', 'tags']);

/**
 * The DAG files of one folder, parsed through a cache: a scan costs one `readdir` and one `stat`
 * per file and parses only what changed; a watched folder answers from memory until a change
 * (docs/architecture.md, "DAG index").
 */
export class DagFolder {
  readonly #cache: ParsedDagCache;
  /** `dagsDir` with a trailing separator, so a path is one concatenation. */
  readonly #dir: string;
  readonly #watch: DirWatch | undefined;
  readonly #index: DagIndexKeeper | undefined;
  #snapshot: Snapshot | undefined;

  constructor(
    readonly dagsDir: string,
    parse: ParseDagFn,
    opts: DagFolderOptions = {},
  ) {
    this.#cache = new ParsedDagCache(parse);
    this.#dir = join(dagsDir, sep);
    this.#watch = opts.watch
      ? new DirWatch(
          dagsDir,
          () => this.invalidate(),
          () => void this.scan().catch(() => undefined),
        )
      : undefined;
    this.#index = opts.indexFile ? new DagIndexKeeper(opts.indexFile, this.#cache) : undefined;
  }

  /** Forgets the in-memory view: the next read looks at the folder again. */
  invalidate(): void {
    this.#snapshot = undefined;
  }

  /** Stops watching. */
  close(): void {
    this.#watch?.close();
    this.#snapshot = undefined;
  }

  /**
   * Every DAG file of the folder, sorted by file name (see {@link #scanNow}); a watched folder
   * answers from memory. The hop through the event loop's poll phase first lets a change already
   * signalled by the file system (inotify queues it during the write) invalidate the view, so
   * whoever wrote a file and then asks sees it.
   */
  async scan(): Promise<FolderScan> {
    const snap = await this.#current();
    const { files, errors } = await snap.scan;
    return { files, errors: [...errors] };
  }

  /** The file `fileName` from the in-memory view; undefined when not watched or not there. */
  async fromMemory(fileName: string): Promise<CachedDagFile | undefined> {
    if (!this.#watch) return undefined;
    const snap = await this.#current();
    if (!snap.byName) {
      const { files } = await snap.scan;
      snap.byName = new Map(files.map((f) => [f.fileName, f]));
    }
    return snap.byName.get(fileName);
  }

  /** Every lower-cased tag once, sorted, computed once per view. */
  async tags(): Promise<readonly string[]> {
    const snap = await this.#current();
    if (!snap.tags) {
      const { files } = await snap.scan;
      snap.tags = [...new Set(files.flatMap((f) => [...f.lower.tags]))].sort();
    }
    return snap.tags;
  }

  async #current(): Promise<Snapshot> {
    if (this.#watch?.ensure()) {
      if (this.#snapshot) await throughPollPhase();
      if (this.#snapshot) return this.#snapshot;
    }
    const snap: Snapshot = { scan: this.#scanNow() };
    if (this.#watch?.active) {
      this.#snapshot = snap;
      snap.scan.catch(() => {
        if (this.#snapshot === snap) this.#snapshot = undefined;
      });
    }
    return snap;
  }

  /** The path a new DAG file `fileName` gets. */
  pathFor(fileName: string, ext = '.yaml'): string {
    return `${this.#dir}${fileName}${ext}`;
  }

  /** Drops the cached parse of `path` after this process changed the file. */
  forget(path: string): void {
    this.#cache.forget(path);
    this.invalidate();
  }

  /**
   * Every DAG file of the folder, sorted by file name, parsed or taken from the cache; files that
   * cannot be read are reported in `errors`. One readdir, then one stat per file.
   */
  async #scanNow(): Promise<FolderScan> {
    this.#index?.load();
    const errors: string[] = [];
    let dirents: Dirent[];
    try {
      dirents = readdirSync(this.dagsDir, { withFileTypes: true });
    } catch (e) {
      if (errnoOf(e) === 'ENOENT') return { files: [], errors };
      throw e;
    }
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)); // `x.yaml` before `x.yml`
    const names = new Set(dirents.filter((d) => !d.isDirectory()).map((d) => d.name));
    const exists = childDagExists(this.dagsDir, names);
    const seen = new Map<string, string>();
    const paths = new Set<string>();
    // In file-name order; unchanged files are taken synchronously, changed ones read in parallel.
    const slots: (CachedDagFile | undefined)[] = [];
    const reads: Promise<void>[] = [];
    for (const d of dirents) {
      const fileName = dagFileNameOf(d.name);
      if (fileName === undefined || d.isDirectory()) continue;
      const first = seen.get(fileName);
      if (first !== undefined) {
        errors.push(`${d.name} is ignored: ${first} has the same file name; remove or rename one`);
        continue;
      }
      seen.set(fileName, d.name);
      const path = `${this.#dir}${d.name}`;
      paths.add(path);
      const failed = (e: unknown): undefined => {
        errors.push(`reading ${d.name} failed: ${messageOf(e)}`);
        return undefined;
      };
      try {
        // Synchronous stat: for 1,000 files it is several times faster than as many async ones.
        const st = statSync(path, { throwIfNoEntry: false });
        if (!st?.isFile()) continue; // gone since the readdir, or a directory behind a link
        const stamp = stampOf(st);
        const hit = this.#cache.peek(path, stamp, exists);
        const slot = slots.push(hit) - 1;
        if (!hit)
          reads.push(
            this.#cache.load(path, fileName, stamp, exists).then((f) => {
              slots[slot] = f;
            }, failed),
          );
      } catch (e) {
        failed(e);
      }
    }
    this.#cache.retainOnly(paths);
    if (reads.length > 0) await Promise.all(reads);
    this.#index?.saveIfChanged();
    return { files: slots.filter((f) => f !== undefined), errors };
  }

  /** The cached file at `path`, or undefined when it vanished or is not a regular file. */
  async #cached(
    path: string,
    fileName: string,
    exists: (ref: string) => boolean,
  ): Promise<CachedDagFile | undefined> {
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st?.isFile()) return undefined;
    return this.#cache.get(path, fileName, stampOf(st), exists);
  }

  /** The parsed file of `fileName`. Errors: bad_request (bad name), not_found. */
  async read(fileName: string): Promise<CachedDagFile> {
    checkFileName(fileName);
    const known = await this.fromMemory(fileName);
    if (known) return known;
    const path = this.mustLocate(fileName);
    const f = await this.#cached(path, fileName, childDagExists(this.dagsDir)).catch(
      (e: unknown) => {
        if (errnoOf(e) === 'ENOENT') return undefined;
        throw e;
      },
    );
    if (!f) throw notFound('dag', fileName);
    return f;
  }

  parseAs(path: string, fileName: string, text: string): CachedDagFile {
    return this.#cache.parseAs(path, fileName, text, childDagExists(this.dagsDir));
  }

  /** The path of the DAG file `fileName` (`.yaml` preferred over `.yml`), if it exists. */
  locate(fileName: string): string | undefined {
    for (const ext of DAG_FILE_EXTENSIONS) {
      const path = this.pathFor(fileName, ext);
      if (statSync(path, { throwIfNoEntry: false })?.isFile()) return path;
    }
    return undefined;
  }

  mustLocate(fileName: string): string {
    checkFileName(fileName);
    const path = this.locate(fileName);
    if (!path) throw notFound('dag', fileName);
    return path;
  }
}

/** spec: Endpoints - `{fileName}` matches `^[a-zA-Z0-9_-]+$`. */
export const checkFileName = (fileName: string): void => {
  if (!FILE_NAME_PATTERN.test(fileName))
    throw badRequest(
      `invalid file name ${JSON.stringify(fileName)}: use letters, digits, "_" and "-" only (^[a-zA-Z0-9_-]+$)`,
      { fileName },
    );
};

/** A file name for a new or renamed DAG: the pattern, and valid as the DAG's default name. */
export const checkNewFileName = (fileName: string): void => {
  checkFileName(fileName);
  const problem = dagNameProblem(fileName); // spec: Errors, rule 2
  if (problem) throw badRequest(problem, { fileName });
  if (RESERVED_FILE_NAMES.has(fileName))
    throw badRequest(
      `the file name ${JSON.stringify(fileName)} is reserved: GET /api/v2/dags/${fileName} is another endpoint; choose another name`,
      { fileName },
    );
};
