import { appendFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errnoOf, isMissing, messageOf } from '../fs/fs-errors.js';
import type { StoreLayout } from '../layout/store-layout.js';

/** A DAG's change file: one byte appended per write of a record indexed under the DAG. */
export const CHANGES_FILE = '.changes';

/** The file `compact` writes before renaming it over the change file: `.changes.<pid>.tmp`. */
const COMPACT_TEMP = /^\.changes\.(\d+)\.tmp$/;

/** The pid in the name of a file `compact` writes, or undefined for any other name. */
export const compactTempPid = (name: string): number | undefined => {
  const pid = COMPACT_TEMP.exec(name)?.[1];
  return pid === undefined ? undefined : Number(pid);
};

/** Past this size (bytes) retention replaces the change file with an empty one (`compact`). */
export const CHANGES_COMPACT_BYTES = 64 * 1024;

/**
 * The per-DAG change stamp of the file store, shared by every process on the data folder
 * (docs/decisions.md, "A per-DAG change stamp"). Every write of a record indexed under a DAG
 * (created, saved, swapped in, deleted) appends one byte to `runs/<dag>/.changes` once the
 * write is readable, before the write's promise resolves; an `O_APPEND` write of one byte is
 * atomic across processes, so the file's size only grows, by one per write. The stamp is the
 * file's inode, size and change time: one `stat` tells a reader whether anything of the DAG's
 * runs was written since it last looked, in this process or another. Both are synchronous
 * calls: a `stat` or a one-byte append costs a few microseconds of CPU, several times less than
 * the same call through the thread pool (measured: docs/decisions.md).
 *
 * Why not the index: a save that changes no summary field (a step's status in a finished run, a
 * running run's progress) appends no index line (`IndexState.holds`).
 *
 * Neither call ever throws: a stamp that cannot be taken is undefined (the reader keeps
 * nothing), and a note that cannot be written is warned about and counted, never turned into a
 * failed write (the record is already readable when it is noted).
 */
export class DagChanges {
  readonly #layout: StoreLayout;
  readonly #warn: (message: string) => void;
  /** Error codes already warned about, per call: each is warned once per process. */
  readonly #warned = new Set<string>();
  #failedNotes = 0;

  constructor(layout: StoreLayout, warn: (message: string) => void = () => undefined) {
    this.#layout = layout;
    this.#warn = warn;
  }

  /** Notes that could not be written since the process started. */
  get failedNotes(): number {
    return this.#failedNotes;
  }

  #path(dagName: string): string {
    return join(this.#layout.dagDir(dagName), CHANGES_FILE);
  }

  /**
   * Notes a write of a record indexed under `dagName`, once it is readable. A DAG folder gone
   * meanwhile (its last run deleted by hand) has nothing left to show: not an error. Any other
   * failure is warned about and counted, and the file removed if it can be, so that the next
   * stamp (a new file, a new inode) differs from every earlier one.
   */
  note(dagName: string): void {
    const path = this.#path(dagName);
    try {
      appendFileSync(path, '+');
    } catch (e) {
      if (isMissing(e)) return;
      this.#failedNotes++;
      this.#warnOnce('note', `could not note a change of DAG "${dagName}" in ${path}`, e);
      try {
        unlinkSync(path);
      } catch {
        // a folder or a read-only file system: its stamp is undefined or its writes fail too
      }
    }
  }

  /**
   * Text that changes with every `note` of the DAG completed since it was last taken, by any
   * process. A DAG folder without the file (runs written before this version, or seeded by
   * hand) gets an empty one: every write from then on is noted. Undefined when the DAG has no
   * folder (no runs: a reader keeps nothing), and on any error (the file cannot be made or is
   * not a file: a read-only or full disk answers, without keeping).
   */
  stamp(dagName: string): string | undefined {
    const path = this.#path(dagName);
    for (let attempt = 0; ; attempt++) {
      try {
        const st = statSync(path, { bigint: true });
        if (st.isFile()) return `${st.ino}:${st.size}:${st.ctimeNs}`;
        this.#warnOnce('stamp', `${path} is not a file: run lists of "${dagName}" are not kept`);
        return undefined;
      } catch (e) {
        if (!isMissing(e) || attempt > 0) return this.#failed(dagName, path, e);
      }
      try {
        appendFileSync(path, ''); // created if missing, never truncated (another may write)
      } catch (e) {
        return this.#failed(dagName, path, e);
      }
    }
  }

  /**
   * Replaces the DAG's change file with an empty one when it is larger than `maxBytes`
   * (retention). The new file has a new inode, so its stamps differ from all the old file's; an
   * append made to the old inode meanwhile belongs to a write readable before the rename, so a
   * stamp taken after the rename was taken after that write was readable. Never throws.
   */
  compact(dagName: string, maxBytes = CHANGES_COMPACT_BYTES): void {
    const path = this.#path(dagName);
    const temp = `${path}.${process.pid}.tmp`;
    try {
      if (statSync(path).size <= maxBytes) return;
      writeFileSync(temp, '');
      renameSync(temp, path);
    } catch (e) {
      if (isMissing(e)) return;
      this.#warnOnce('compact', `could not compact ${path}`, e);
      try {
        unlinkSync(temp);
      } catch {
        // never made
      }
    }
  }

  #failed(dagName: string, path: string, e: unknown): undefined {
    if (!isMissing(e))
      this.#warnOnce('stamp', `run lists of "${dagName}" are not kept: ${path} unreadable`, e);
    return undefined;
  }

  #warnOnce(call: string, message: string, e?: unknown): void {
    const key = `${call}:${errnoOf(e) ?? ''}`;
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#warn(e === undefined ? message : `${message}: ${messageOf(e)}`);
  }
}
