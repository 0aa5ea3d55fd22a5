import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isMissing } from '../fs/fs-errors.js';
import { RUN_LOG_FILE } from '../layout/store-layout.js';
import { DAY_MS } from './retention.js';
import type { RunSummary } from './run-summary.js';

/** Days of history to keep: one number for all DAGs, or per DAG (its `histRetentionDays`). */
export type RetentionDays = number | ((dagName: string) => number | Promise<number>);

/** What a clean-up deleted. */
export interface CleanupReport {
  /** Runs deleted (with their child runs and logs), per DAG; DAGs with none are left out. */
  readonly deletedRuns: Readonly<Record<string, number>>;
  /** Total of `deletedRuns`. */
  readonly totalRuns: number;
  /** Log folders removed because their run no longer exists. */
  readonly orphanedLogFolders: number;
}

/** What the clean-up needs from the store. */
export interface CleanupDeps {
  readonly dagNames: () => Promise<string[]>;
  readonly deleteRunsOlderThan: (dagName: string, days: number) => Promise<number>;
  /** Every run in the store, child runs included. */
  readonly liveRuns: () => Promise<readonly Pick<RunSummary, 'name' | 'dagRunId'>[]>;
  readonly logDir: string;
  readonly now: () => Date;
}

const daysOf = async (days: RetentionDays, dag: string): Promise<number> =>
  typeof days === 'number' ? days : days(dag);

/** The store-wide retention pass of `FsRunStore.cleanupAll`. */
export const cleanupStore = async (
  deps: CleanupDeps,
  days: RetentionDays,
): Promise<CleanupReport> => {
  const deletedRuns: Record<string, number> = {};
  let totalRuns = 0;
  for (const dag of await deps.dagNames()) {
    const n = await deps.deleteRunsOlderThan(dag, await daysOf(days, dag));
    if (n > 0) deletedRuns[dag] = n;
    totalRuns += n;
  }
  const orphanedLogFolders = await removeOrphanedLogs(deps, days);
  return { deletedRuns, totalRuns, orphanedLogFolders };
};

const dirNames = async (dir: string): Promise<string[]> => {
  try {
    return (await readdir(dir, { withFileTypes: true }))
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => e.name);
  } catch (e) {
    if (isMissing(e)) return [];
    throw e;
  }
};

/**
 * Removes `<logDir>/<dag>/<id>/` folders that hold a run log, belong to no run in the store and
 * were last changed before the retention cutoff (a deletion a crash interrupted, or logs of an
 * older release). Folders without `run.log` are not run logs and are left alone.
 */
const removeOrphanedLogs = async (deps: CleanupDeps, days: RetentionDays): Promise<number> => {
  const candidates: { key: string; dir: string }[] = [];
  for (const dag of await dirNames(deps.logDir)) {
    const cutoff = deps.now().getTime() - (await daysOf(days, dag)) * DAY_MS;
    for (const id of await dirNames(join(deps.logDir, dag))) {
      const dir = join(deps.logDir, dag, id);
      const st = await stat(join(dir, RUN_LOG_FILE)).catch(() => undefined);
      if (st !== undefined && st.mtimeMs < cutoff) candidates.push({ key: `${dag}/${id}`, dir });
    }
  }
  if (candidates.length === 0) return 0;
  // Read the runs after listing the folders: a run created meanwhile is in the list.
  const live = new Set((await deps.liveRuns()).map((r) => `${r.name}/${r.dagRunId}`));
  let removed = 0;
  for (const c of candidates) {
    if (live.has(c.key)) continue;
    await rm(c.dir, { recursive: true, force: true });
    removed++;
  }
  return removed;
};
