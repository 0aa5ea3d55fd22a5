import { AppError, ErrorCode, RunStatus, badRequest, type Clock } from '@trellis/core';
import { isSafeDagName, type StoreLayout } from '../layout/store-layout.js';
import type { DagChanges } from './dag-changes.js';
import type { DagIndexes } from './dag-indexes.js';
import { DAY_MS, isExpired } from './retention.js';
import type { RunDeleter } from './run-deleter.js';
import type { RunReader } from './run-reader.js';
import { isChildRun } from './run-summary.js';

/** What `deleteExpiredRuns` needs from the store. */
export interface ExpireRunsDeps {
  readonly layout: StoreLayout;
  readonly indexes: DagIndexes;
  readonly reader: RunReader;
  readonly deleter: RunDeleter;
  /** The DAGs' change files: retention empties one grown past `CHANGES_COMPACT_BYTES`. */
  readonly changes: DagChanges;
  readonly clock: Clock;
}

/**
 * Retention of one DAG (`FsRunStore.deleteRunsOlderThan`): deletes its top-level runs that
 * ended more than `days` days ago, with their children and logs, unless a child still runs or
 * waits. Each candidate from the index is confirmed from its record. Returns how many. Also
 * empties the DAG's change file when it grew past its bound (dag-changes.ts).
 */
export const deleteExpiredRuns = async (
  deps: ExpireRunsDeps,
  dagName: string,
  days: number,
): Promise<number> => {
  if (!(days >= 0))
    throw badRequest(`invalid retention ${days}: use a number of days of 0 or more`);
  if (!isSafeDagName(dagName)) return 0;
  const { indexes, deleter } = deps;
  const cutoffMs = deps.clock.now().getTime() - days * DAY_MS;
  await deleter.sweepTrash(dagName);
  let deleted = 0;
  for (const e of [...(await indexes.of(dagName).entries())]) {
    const s = e.summary;
    if (isChildRun(s) || !isExpired(s, cutoffMs)) continue;
    const loc = deps.layout.locate(s);
    const record = await deps.reader.getRunOrUndefined(s, undefined);
    if (record === undefined) {
      await indexes.of(dagName).remove([loc.key]); // a stale index line: nothing on disk
      continue;
    }
    if (!isExpired(record, cutoffMs)) continue;
    const children = await deleter.childRecords(loc.dir);
    if (children.some((c) => c.status === RunStatus.Running || c.status === RunStatus.Queued))
      continue;
    try {
      await deleter.deleteTree(s, loc);
      deleted++;
    } catch (err) {
      if (!(AppError.is(err) && err.code === ErrorCode.NotFound)) throw err;
    }
  }
  deps.changes.compact(dagName); // after the deletions' notes: a new, empty file
  return deleted;
};
