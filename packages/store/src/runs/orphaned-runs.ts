import { RunStatus } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { isOrphanedOwner } from '../owner/orphan.js';
import type { DagIndexes } from './dag-indexes.js';
import type { RunReader } from './run-reader.js';
import { sameSummaryFields, storageRootOf, toRunSummary } from './run-summary.js';

/**
 * Runs whose record says running but whose owner is gone (`FsRunStore.findOrphanedRuns`).
 * Candidates come from the indexes and are confirmed from their records; a stale index line is
 * corrected on the way.
 */
export const findOrphanedRuns = async (
  indexes: DagIndexes,
  reader: RunReader,
): Promise<DagRunRecord[]> => {
  const out: DagRunRecord[] = [];
  for (const dag of await indexes.dagNames()) {
    const index = indexes.of(dag);
    for (const e of await index.entries()) {
      const s = e.summary;
      const maybeRunning =
        s.status === RunStatus.Running ||
        ((s.status === RunStatus.NotStarted || s.status === RunStatus.Queued) &&
          s.owner !== undefined);
      if (!maybeRunning) continue;
      const record = await reader.getRunOrUndefined(s, storageRootOf(s));
      if (record === undefined) continue;
      const fresh = toRunSummary(record);
      if (!sameSummaryFields(fresh, s)) await index.put(fresh);
      if (record.status === RunStatus.Running && isOrphanedOwner(record.owner)) out.push(record);
    }
  }
  return out;
};
