import { randomBytes } from 'node:crypto';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { AppError, Clock } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { isMissing, messageOf } from '../fs/fs-errors.js';
import type { DagIndex } from '../index-file/dag-index.js';
import { pidExists } from '../owner/process-owner.js';
import {
  CHILDREN_DIR,
  STATUS_FILE,
  indexKeyOf,
  type RunLocation,
  type StoreLayout,
} from '../layout/store-layout.js';
import { compactTempPid, type DagChanges } from './dag-changes.js';
import type { KeyedSerialQueue } from './keyed-serial-queue.js';
import { isChildRun } from './run-summary.js';
import { runDirNames } from './scan-dag-runs.js';
import { readRecordFile } from './status-file.js';

/** Prefix of the folder a new run is prepared in before it is renamed into place. */
export const TEMP_CREATE_PREFIX = '.tmp-create-';
/** Age after which a leftover preparation folder (a crash during createRun) is removed, in ms. */
const TEMP_DIR_MAX_AGE_MS = 60 * 60 * 1000;
const TRASH_PATTERN = /^\.trash-(.+)-[0-9a-f]{8}$/;

/** What `RunDeleter` needs from the store. */
export interface RunDeleterDeps {
  readonly layout: StoreLayout;
  readonly index: (dagName: string) => DagIndex;
  /** The DAGs' change stamps: a deletion is noted once the run is gone (dag-changes.ts). */
  readonly changes: DagChanges;
  /** The store's per-run chain: a deletion waits for the run's pending saves. */
  readonly saves: KeyedSerialQueue;
  readonly clock: Clock;
  readonly warn: (message: string) => void;
  readonly notFound: (ref: RunRef) => AppError;
}

/**
 * Deletes runs together with their child runs and all their logs, so nothing is orphaned: the
 * run folder is renamed to `.trash-<id>-<hex>` first, then index lines, logs and the folder are
 * removed. Every step can be repeated, and `sweepTrash` finishes what a crash interrupted.
 */
export class RunDeleter {
  readonly #deps: RunDeleterDeps;

  constructor(deps: RunDeleterDeps) {
    this.#deps = deps;
  }

  /** Records of the children stored in a run folder; unreadable ones are reported and skipped. */
  async childRecords(runDir: string): Promise<DagRunRecord[]> {
    const dir = join(runDir, CHILDREN_DIR);
    const out: DagRunRecord[] = [];
    for (const id of (await runDirNames(dir)) ?? []) {
      try {
        out.push(await readRecordFile(join(dir, id, STATUS_FILE)));
      } catch (e) {
        if (!isMissing(e)) this.#deps.warn(`skipped ${join(dir, id)}: ${messageOf(e)}`);
      }
    }
    return out;
  }

  /**
   * Moves a run folder to the trash (so a crash midway leaves nothing half-visible) and finishes
   * the deletion. Errors: `not_found` when the folder is gone.
   */
  async deleteTree(ref: RunRef, loc: RunLocation): Promise<void> {
    const trash = join(dirname(loc.dir), `.trash-${ref.dagRunId}-${randomHex()}`);
    await this.#deps.saves.run(loc.dir, async () => {
      try {
        await rename(loc.dir, trash);
      } catch (e) {
        if (isMissing(e)) throw this.#deps.notFound(ref);
        throw e;
      }
    });
    try {
      await this.#finishTrash(ref.name, ref.dagRunId, trash);
    } finally {
      // the run is gone from reads since the rename, whatever became of the rest
      this.#deps.changes.note(loc.indexDag);
    }
  }

  /**
   * Completes a deletion: index lines removed, the logs of the run and of its children deleted,
   * then the trashed folder itself. Safe to repeat after a crash at any step.
   */
  async #finishTrash(dagName: string, dagRunId: string, trash: string): Promise<void> {
    const index = this.#deps.index(dagName);
    const children = new Map<string, RunRef>();
    const childRecords = await this.childRecords(trash);
    for (const c of childRecords) children.set(c.dagRunId, c);
    const own = await readRecordFile(join(trash, STATUS_FILE)).catch(() => undefined);
    const logDirs = [own, ...childRecords]
      .filter((r): r is DagRunRecord => r !== undefined)
      .map((r) => this.#deps.layout.runLogDirOf(r))
      .filter((d, i, all) => all.indexOf(d) === i);
    for (const e of await index.entries())
      if (isChildRun(e.summary) && e.summary.root.dagRunId === dagRunId)
        children.set(e.summary.dagRunId, e.summary);
    const root: RunRef = { name: dagName, dagRunId };
    await index.remove([dagRunId, ...[...children.values()].map((c) => indexKeyOf(c, root))]);
    // also for a deletion a crash interrupted (`sweepTrash`), which may not have been noted
    this.#deps.changes.note(dagName);
    for (const r of [root, ...children.values()])
      await rm(this.#deps.layout.runLogDir(r), { recursive: true, force: true });
    // logs under a DAG's own logDir, where the records say they are
    for (const dir of logDirs) await rm(dir, { recursive: true, force: true });
    await rm(trash, { recursive: true, force: true });
  }

  /**
   * Finishes deletions a crash interrupted, and removes what crashes left of a run's creation and
   * of a change file's compaction.
   */
  async sweepTrash(dagName: string): Promise<void> {
    const dagDir = this.#deps.layout.dagDir(dagName);
    let names: string[];
    try {
      names = await readdir(dagDir);
    } catch (e) {
      if (isMissing(e)) return;
      throw e;
    }
    for (const name of names) {
      const path = join(dagDir, name);
      const trashed = TRASH_PATTERN.exec(name);
      if (trashed?.[1] !== undefined) await this.#finishTrash(dagName, trashed[1], path);
      else if (await this.#isLeftover(name, path)) await rm(path, { recursive: true, force: true });
    }
  }

  /**
   * True for a folder `createRun` prepared and a crash left (after `TEMP_DIR_MAX_AGE_MS`), and
   * for a file a change file compaction (`DagChanges.compact`) left: its process does not run on
   * this host. Compactions are synchronous calls, so this process has none under way, and one of
   * another process takes microseconds: its file is a leftover after `TEMP_DIR_MAX_AGE_MS` too
   * (a pid reused, or a process of another host sharing the folder).
   */
  async #isLeftover(name: string, path: string): Promise<boolean> {
    if (name.startsWith(TEMP_CREATE_PREFIX)) return this.#isOlderThan(path, TEMP_DIR_MAX_AGE_MS);
    const pid = compactTempPid(name);
    if (pid === undefined) return false;
    return pid === process.pid || !pidExists(pid) || this.#isOlderThan(path, TEMP_DIR_MAX_AGE_MS);
  }

  async #isOlderThan(path: string, ms: number): Promise<boolean> {
    const st = await stat(path).catch(() => undefined);
    return st !== undefined && this.#deps.clock.now().getTime() - st.mtimeMs > ms;
  }
}

const randomHex = (): string => randomBytes(4).toString('hex');
