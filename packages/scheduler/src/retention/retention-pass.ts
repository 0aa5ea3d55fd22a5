import type { DagRunRecord, RunRef } from '@trellis/spec';

/** spec: `histRetentionDays` default. */
export const DEFAULT_HIST_RETENTION_DAYS = 30;

/** What a retention pass deleted (the store's clean-up report). */
export interface RetentionReport {
  readonly deletedRuns: Readonly<Record<string, number>>;
  readonly totalRuns: number;
  readonly orphanedLogFolders: number;
}

/** What the retention pass needs from the store (`FsRunStore` has it). */
export interface RetentionStore {
  cleanupAll(days: (dagName: string) => Promise<number>): Promise<RetentionReport>;
  latestRun(dagName: string): Promise<DagRunRecord>;
  getSnapshot(ref: RunRef): Promise<{ readonly dag: unknown }>;
}

/** What it needs from the DAGs folder (`DagFileLoader` has it). */
export interface RetentionDags {
  locate(ref: string): string | undefined;
  load(ref: string): { readonly dag: { readonly histRetentionDays: number } };
}

const daysIn = (dag: unknown): number | undefined => {
  const d = (dag as { histRetentionDays?: unknown } | null)?.histRetentionDays;
  return typeof d === 'number' && d >= 0 ? d : undefined;
};

/**
 * The daily retention pass (issue #9; the scheduler calls it once a day, `trellis cleanup` on
 * demand with a fixed number): every DAG that has runs keeps them for its own
 * `histRetentionDays` (from its file in the DAGs folder; for a DAG whose file is gone, from the
 * snapshot of its latest run; else `defaultDays`). Run records, child runs and logs go
 * together; running and queued runs stay.
 */
export const applyRetentionToAll = (deps: {
  readonly store: RetentionStore;
  readonly dags: RetentionDags;
  /** Days for a DAG known from neither (config `histRetentionDays`). @default 30 */
  readonly defaultDays?: number;
}): Promise<RetentionReport> =>
  deps.store.cleanupAll(async (name) => {
    try {
      if (deps.dags.locate(name) !== undefined) return deps.dags.load(name).dag.histRetentionDays;
    } catch {
      // an unreadable DAG file: fall back to what its runs were made with
    }
    try {
      const latest = await deps.store.latestRun(name);
      const days = daysIn((await deps.store.getSnapshot(latest)).dag);
      if (days !== undefined) return days;
    } catch {
      // no run left to ask
    }
    return deps.defaultDays ?? DEFAULT_HIST_RETENTION_DAYS;
  });
