import { randomBytes } from 'node:crypto';
import { mkdir, rm, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { alreadyExists, notFound, type Clock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { tempPathFor, writeNewFile } from '../fs/atomic-write.js';
import { fd } from '../fs/fd.js';
import { isExisting, isMissing } from '../fs/fs-errors.js';
import { exists } from '../fs/path-exists.js';
import { SNAPSHOT_FILE, STATUS_FILE, type StoreLayout } from '../layout/store-layout.js';
import type { DagChanges } from './dag-changes.js';
import type { DagIndexes } from './dag-indexes.js';
import type { KeyedSerialQueue } from './keyed-serial-queue.js';
import { TEMP_CREATE_PREFIX } from './run-deleter.js';
import { locateForWrite, runNotFound } from './run-locations.js';
import type { RunSnapshot } from './run-snapshot.js';
import { storageRootOf, toRunSummary } from './run-summary.js';
import type { RecordCache } from './record-cache.js';
import type { RecordText } from './record-json.js';
import { readDiskRevision, serializeRecord } from './status-file.js';
import { lockRun } from './run-lock.js';
import { inoOf, isDurableStatus, swapRecord } from './run-swap.js';

/** What `RunWriter` needs from the store. */
export interface RunWriterDeps {
  readonly layout: StoreLayout;
  readonly indexes: DagIndexes;
  /** The DAGs' change stamps: every write made readable is noted there (dag-changes.ts). */
  readonly changes: DagChanges;
  /** The store's per-run chain: saves of one run are applied in call order. */
  readonly saves: KeyedSerialQueue;
  readonly clock: Clock;
  /** The reader's status files: a record this process creates or swaps in is kept there. */
  readonly records?: RecordCache;
  /** `FsRunStoreOptions.onRecordSaved`. */
  readonly onSaved?: ((record: DagRunRecord) => void) | undefined;
  /** Where a listener's failure is told (it must not fail a write that landed). */
  readonly warn?: ((message: string) => void) | undefined;
}

/**
 * Writes run records: creates a run's folder with its record and DAG snapshot, and replaces
 * records (in call order per run, never over a newer revision), each with its index line. See
 * `FsRunStore` for the contract of each method.
 */
export class RunWriter {
  readonly #deps: RunWriterDeps;
  /** Revision this process last wrote to a running record's status file, by path. */
  readonly #written = new Map<string, number>();
  /** Folders this process made or found (a DAG's runs folder), so a new run costs one mkdir. */
  readonly #dirs = new Set<string>();
  /** Log folders made by `createRun` whose run has no recorder yet (it need not make them). */
  readonly #madeLogDirs = new Set<string>();

  constructor(deps: RunWriterDeps) {
    this.#deps = deps;
  }

  /** `FsRunStore.createRun`. */
  async createRun(record: DagRunRecord, snapshot: RunSnapshot): Promise<void> {
    const { layout } = this.#deps;
    const loc = locateForWrite(layout, record);
    const root = storageRootOf(record);
    const kind = root === undefined ? 'run' : 'child run';
    const status = serializeRecord(record);
    const dag = JSON.stringify(snapshot);
    const summary = toRunSummary(record);
    // A run created running is not synced (like its later running saves, see saveRun): after an
    // OS crash it is recovered as failed, or gone with its folder (its directory is not synced).
    const durable = isDurableStatus(record.status);
    let published = false;
    const write = this.#deps.saves.run(loc.dir, async () => {
      if (root !== undefined && !(await exists(layout.locate(root).dir)))
        throw notFound('run', `${root.name}/${root.dagRunId}`);
      const parent = dirname(loc.dir);
      // A taken id shows when the rename meets the existing (never empty) folder.
      const temp = join(parent, `${TEMP_CREATE_PREFIX}${record.dagRunId}-${randomHex()}`);
      await this.#mkdirIn(parent, temp);
      try {
        // Private until the rename publishes the folder: no temporary names needed inside it,
        // and both files are written together.
        await Promise.all([
          writeNewFile(join(temp, SNAPSHOT_FILE), dag, { durable }),
          writeNewFile(join(temp, STATUS_FILE), status.parts, { durable }),
        ]);
        const ino = inoOf(join(temp, STATUS_FILE));
        await fd.rename(temp, loc.dir);
        published = true;
        this.#remember(join(loc.dir, STATUS_FILE), status.parts, ino);
      } catch (e) {
        await rm(temp, { recursive: true, force: true });
        if (isExisting(e)) throw alreadyExists(kind, record.dagRunId);
        throw e;
      }
      // an accepted (queued) or final run must not vanish with its folder's name at a power cut;
      // a failed sync is told once the run is complete (listed), as it is readable (see saveRun)
      const unsynced = durable ? await syncFailure(parent) : undefined;
      // its first save need not read the revision back (as for a running save, see saveRun)
      if (!durable) this.#written.set(join(loc.dir, STATUS_FILE), status.revision);
      const logDir = layout.runLogDirOf(record);
      await Promise.all([
        mkdir(logDir, { recursive: true }).then(() => this.#noteLogDir(logDir)),
        this.#deps.indexes.of(loc.indexDag).put(summary),
      ]);
      if (unsynced !== undefined) throw unsynced.error;
    });
    await this.#noted(loc.indexDag, () => published, write);
    this.#saved(status);
  }

  /** True (once) when `createRun` made the log folder `dir`: its recorder need not make it. */
  takeMadeLogDir(dir: string): boolean {
    return this.#madeLogDirs.delete(dir);
  }

  /** `FsRunStore.saveRun`. */
  async saveRun(record: DagRunRecord): Promise<void> {
    const loc = locateForWrite(this.#deps.layout, record);
    const durable = isDurableStatus(record.status);
    const summary = toRunSummary(record);
    const statusPath = join(loc.dir, STATUS_FILE);
    // The new content goes to a temporary file at once, outside the run's chain: consecutive
    // saves of a run write (and sync) their files side by side; only the renames, which publish
    // them, are applied one after another in call order.
    const temp = tempPathFor(statusPath);
    const serialized = serializeRecord(record);
    const written = writeNewFile(temp, serialized.parts, { durable }).then(
      () => undefined,
      (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
    );
    let renamed = false;
    await this.#deps.saves.run(loc.dir, async () => {
      try {
        const failed = await written;
        if (failed !== undefined)
          throw isMissing(failed) ? runNotFound(record, storageRootOf(record)) : failed;
        // Under the run's lock from the revision read to the rename, as a swap (run-swap.ts) of
        // another process is: neither lands between the other's read and rename.
        const lock = await lockRun(loc.dir, record, this.#deps.clock);
        try {
          // The revision on disk is this process's own last one while it runs the run (only the
          // owner writes a running record), so it need not be read back at every save.
          const known = this.#written.get(statusPath);
          const onDisk = known ?? (await readDiskRevision(statusPath));
          if (serialized.revision < onDisk) return;
          // Durable (fsync) for the states that must survive a power loss: queued and final. The
          // saves in between are atomic renames; after an OS crash a run left "running" is
          // recovered as failed anyway, so their fsync (a few ms each) would buy nothing.
          await fd.rename(temp, statusPath);
          renamed = true;
        } finally {
          lock.release();
        }
        // what a creation or swap kept of it is stale now: not held until the cache's bound
        this.#deps.records?.forget(statusPath);
        // noted and published once the record is readable (as every read sees it), before the
        // directory sync and the index line, whose syncs would delay a waiting client by
        // milliseconds; noted first, so a reader told of the save never gets a body kept from
        // before it (a save of an existing run changes no listing's runs, only their records)
        this.#deps.changes.note(loc.indexDag);
        this.#saved(serialized);
        if (durable) this.#written.delete(statusPath);
        else this.#written.set(statusPath, serialized.revision);
      } catch (e) {
        if (isMissing(e)) throw runNotFound(record, storageRootOf(record));
        throw e;
      } finally {
        if (!renamed) await unlink(temp).catch(() => undefined);
      }
      // The record landed: a failed directory sync (its name may not survive a power cut) is
      // told after the index line, which lists it, not instead of it (docs/decisions.md).
      const unsynced = durable ? await syncFailure(loc.dir) : undefined;
      await this.#deps.indexes.of(loc.indexDag).put(summary);
      if (unsynced !== undefined) throw unsynced.error;
    });
  }

  /** `FsRunStore.saveRunIf`. */
  async saveRunIf(record: DagRunRecord, expectRevision: number): Promise<boolean> {
    const loc = locateForWrite(this.#deps.layout, record);
    const statusPath = join(loc.dir, STATUS_FILE);
    const durable = isDurableStatus(record.status);
    const serialized = serializeRecord(record);
    // The new content goes to a private temporary file at once, while the lock is taken (as in
    // saveRun): under the lock only the revision is read and the file renamed into place.
    const temp = tempPathFor(statusPath);
    const written = writeNewFile(temp, serialized.parts, { durable }).then(
      () => undefined,
      (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
    );
    let renamed = false;
    const onRenamed = (ino: bigint | undefined): void => {
      renamed = true;
      this.#remember(statusPath, serialized.parts, ino);
      this.#deps.changes.note(loc.indexDag); // readable now: noted before anyone is told (saveRun)
      // published once readable, before the lock's removal, the directory sync and the index
      // line (as in saveRun): a client waiting for a final status is not held by their syncs
      this.#saved(serialized);
    };
    return this.#deps.saves.run(loc.dir, async () => {
      let unsynced: { error: unknown } | undefined;
      try {
        await swapRecord(record, temp, written, expectRevision, this.#deps.clock, onRenamed);
      } catch (e) {
        if (!renamed) throw e;
        unsynced = { error: e }; // only the directory sync follows the rename (as in saveRun)
      } finally {
        // once written (a lost swap may end before the temporary file is even created); not
        // awaited: a lost swap answers at once, and readers skip dot-named temporary files
        if (!renamed) void written.then(() => unlink(temp).catch(() => undefined));
      }
      if (!renamed) return false;
      this.#written.delete(statusPath);
      await this.#deps.indexes.of(loc.indexDag).put(toRunSummary(record));
      if (unsynced !== undefined) throw unsynced.error;
      return true;
    });
  }

  /**
   * Settles as `write` does (a new run), after noting the DAG's change (dag-changes.ts) when
   * `published()` says the run became readable, also when a later step of the write failed:
   * after its index line, so a body kept under the new stamp holds the new run.
   */
  async #noted<T>(dagName: string, published: () => boolean, write: Promise<T>): Promise<T> {
    try {
      return await write;
    } finally {
      if (published()) this.#deps.changes.note(dagName);
    }
  }

  /**
   * Keeps the record just renamed into place at `path` (from a file of inode `ino`) for the next
   * read (its next reader, for a swap or a new run, is most often the coordinator answering the
   * run's claim or first report): a stat instead of a read of the file. Not for saveRun, whose
   * records may be large (no whole text of a record is made there).
   */
  #remember(path: string, parts: readonly Uint8Array[], ino: bigint | undefined): void {
    const bytes = parts.reduce((n, p) => n + p.length, 0);
    if (ino === undefined || bytes > REMEMBER_MAX_BYTES) return;
    this.#deps.records?.remember(path, Buffer.concat(parts, bytes).toString(), ino);
  }

  /** Tells `onSaved` of a record written, as it was when its save was called. */
  #saved(serialized: RecordText): void {
    try {
      this.#deps.onSaved?.(serialized.copy());
    } catch (e) {
      // the record is in place: the write stands, whatever a listener did with it
      this.#deps.warn?.(`a listener of saved run records failed: ${(e as Error).message}`);
    }
  }

  /** Remembers a log folder made for a new run, for its recorder (a bounded number of them). */
  #noteLogDir(dir: string): void {
    this.#madeLogDirs.add(dir);
    // runs that execute elsewhere (a worker) never take theirs: forget the oldest
    if (this.#madeLogDirs.size > MADE_LOG_DIRS_KEPT)
      this.#madeLogDirs.delete(this.#madeLogDirs.values().next().value as string);
  }

  /**
   * Makes the folder `dir` inside `parent`, creating `parent` first when this process has not
   * seen it yet (a DAG's runs folder), or when it is gone (deleted meanwhile): one `mkdir` per run
   * instead of a recursive one that checks every level.
   */
  async #mkdirIn(parent: string, dir: string): Promise<void> {
    if (this.#dirs.has(parent)) {
      try {
        await mkdir(dir);
        return;
      } catch (e) {
        if (!isMissing(e)) throw e;
        this.#dirs.delete(parent);
      }
    }
    await mkdir(parent, { recursive: true });
    this.#dirs.add(parent);
    await mkdir(dir);
  }
}

const randomHex = (): string => randomBytes(4).toString('hex');

/** The error of the directory sync of `dir`, or undefined when it succeeded. */
const syncFailure = (dir: string): Promise<{ error: unknown } | undefined> =>
  fd.syncDir(dir).then(
    () => undefined,
    (error: unknown) => ({ error }),
  );

/** Log folders of new runs remembered for their recorders (beyond: the recorder makes sure). */
const MADE_LOG_DIRS_KEPT = 1000;

/**
 * Records larger than this are not kept after their creation or swap (their read costs more than
 * its file calls, and a burst of runs must not fill the cache with large texts).
 */
const REMEMBER_MAX_BYTES = 16 * 1024;
