import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError, ErrorCode, notFound } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { isMissing } from '../fs/fs-errors.js';
import { exists } from '../fs/path-exists.js';
import {
  SNAPSHOT_FILE,
  STATUS_FILE,
  isSafeDagName,
  type StoreLayout,
} from '../layout/store-layout.js';
import type { DagIndexes } from './dag-indexes.js';
import type { RootOption } from './fs-run-store-options.js';
import type { RecordCache } from './record-cache.js';
import { selectRuns, type IndexedRun, type RunFilter } from './run-filter.js';
import { locateForRead, runNotFound } from './run-locations.js';
import { parseSnapshot, type RunSnapshot } from './run-snapshot.js';
import { isChildRun, type RunSummary } from './run-summary.js';
import { parseRecord } from './status-file.js';

/** What `RunReader` needs from the store. */
export interface RunReaderDeps {
  readonly layout: StoreLayout;
  readonly indexes: DagIndexes;
  readonly warn: (message: string) => void;
  /** Status files read (and written by this process), shared with the writer. */
  readonly records: RecordCache;
}

/**
 * Reads runs: records (parsed status files, revalidated by stat for polling readers), DAG
 * snapshots, and listings from the indexes. See `FsRunStore` for the contract of each method.
 */
export class RunReader {
  readonly #deps: RunReaderDeps;
  /** Parsed status files, revalidated by stat (polling readers). */
  readonly #records: RecordCache;

  constructor(deps: RunReaderDeps) {
    this.#deps = deps;
    this.#records = deps.records;
  }

  /** `FsRunStore.getRun`. */
  async getRun(ref: RunRef, opts: RootOption = {}): Promise<DagRunRecord> {
    const loc = locateForRead(this.#deps.layout, ref, opts.root);
    const path = join(loc.dir, STATUS_FILE);
    try {
      return parseRecord(path, await this.#records.read(path));
    } catch (e) {
      if (isMissing(e)) throw runNotFound(ref, opts.root);
      throw e;
    }
  }

  /** The record, or undefined when it is gone; a corrupt record is reported and skipped. */
  async getRunOrUndefined(
    ref: RunRef,
    root: RunRef | undefined,
  ): Promise<DagRunRecord | undefined> {
    try {
      return await this.getRun(ref, root === undefined ? {} : { root });
    } catch (e) {
      if (AppError.is(e) && e.code === ErrorCode.NotFound) return undefined;
      if (AppError.is(e)) {
        this.#deps.warn(e.message);
        return undefined;
      }
      throw e;
    }
  }

  /** `FsRunStore.getSnapshot`. */
  async getSnapshot(ref: RunRef, opts: RootOption = {}): Promise<RunSnapshot> {
    const path = join(locateForRead(this.#deps.layout, ref, opts.root).dir, SNAPSHOT_FILE);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (e) {
      if (isMissing(e)) throw runNotFound(ref, opts.root);
      throw e;
    }
    return parseSnapshot(path, text);
  }

  /** `FsRunStore.latestRun`. */
  async latestRun(dagName: string): Promise<DagRunRecord> {
    if (isSafeDagName(dagName)) {
      for (const e of await this.#deps.indexes.of(dagName).entries()) {
        if (isChildRun(e.summary)) continue;
        return this.getRun(e.summary);
      }
    }
    throw notFound('run', `${dagName}/latest`);
  }

  /** `FsRunStore.latestSummary`. */
  async latestSummary(dagName: string, maxStaleMs: number): Promise<RunSummary | undefined> {
    if (!isSafeDagName(dagName)) return undefined;
    const entries = await this.#deps.indexes.of(dagName).entries(maxStaleMs);
    return entries.find((e) => !isChildRun(e.summary))?.summary;
  }

  /** `FsRunStore.listRuns`. */
  async listRuns(filter: RunFilter = {}): Promise<RunSummary[]> {
    const { name } = filter;
    const { indexes } = this.#deps;
    // Children are indexed under their root's DAG: with includeChildren every index is read.
    const dags =
      name !== undefined && filter.includeChildren !== true
        ? isSafeDagName(name)
          ? [name]
          : []
        : await indexes.dagNames(filter.maxStaleMs);
    const stale = filter.maxStaleMs ?? 0;
    // Indexes read recently answer at once; only the others wait for their file.
    const lists: (readonly IndexedRun[])[] = [];
    const waits: Promise<unknown>[] = [];
    for (const d of dags) {
      const index = indexes.of(d);
      const now = stale > 0 ? index.fresh(stale) : undefined;
      if (now !== undefined) lists.push(now);
      else waits.push(index.entries(stale).then((l) => lists.push(l)));
    }
    await Promise.all(waits);
    return selectRuns(lists, filter);
  }

  /** `FsRunStore.listChildren`. */
  async listChildren(rootRef: RunRef): Promise<RunSummary[]> {
    const loc = locateForRead(this.#deps.layout, rootRef);
    if (!(await exists(loc.dir))) throw runNotFound(rootRef);
    const entries = await this.#deps.indexes.of(rootRef.name).entries();
    const children: IndexedRun[] = [];
    for (const e of entries)
      if (isChildRun(e.summary) && e.summary.root.dagRunId === rootRef.dagRunId) children.push(e);
    return children.reverse().map((e) => e.summary);
  }
}
