import { appendFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isMissing } from '../fs/fs-errors.js';
import type { StoreLayout } from '../layout/store-layout.js';

/** A DAG's change file: one byte appended per write of a record indexed under the DAG. */
export const CHANGES_FILE = '.changes';

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
 */
export class DagChanges {
  readonly #layout: StoreLayout;

  constructor(layout: StoreLayout) {
    this.#layout = layout;
  }

  #path(dagName: string): string {
    return join(this.#layout.dagDir(dagName), CHANGES_FILE);
  }

  /**
   * Notes a write of a record indexed under `dagName`, once it is readable. A DAG folder gone
   * meanwhile (its last run deleted by hand) has nothing left to show: not an error.
   */
  note(dagName: string): void {
    try {
      appendFileSync(this.#path(dagName), '+');
    } catch (e) {
      if (!isMissing(e)) throw e;
    }
  }

  /**
   * Text that changes with every `note` of the DAG completed since it was last taken, by any
   * process. A DAG folder without the file (runs written before this version, or seeded by
   * hand) gets an empty one: every write from then on is noted. Undefined when the DAG has no
   * folder (no runs: a reader keeps nothing).
   */
  stamp(dagName: string): string | undefined {
    const path = this.#path(dagName);
    for (let attempt = 0; ; attempt++) {
      try {
        const st = statSync(path, { bigint: true });
        return `${st.ino}:${st.size}:${st.ctimeNs}`;
      } catch (e) {
        if (!isMissing(e) || attempt > 0) return missing(e);
      }
      try {
        appendFileSync(path, ''); // created if missing, never truncated (another may write)
      } catch (e) {
        return missing(e);
      }
    }
  }
}

/** Undefined for a missing file or folder; any other error is thrown. */
const missing = (e: unknown): undefined => {
  if (isMissing(e)) return undefined;
  throw e;
};
