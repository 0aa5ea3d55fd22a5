import type { Clock } from '@trellis/core';

/** The retention pass: first a minute after this process became the scheduler, then daily. */
const RETENTION_FIRST_MS = 60_000;
const RETENTION_EVERY_MS = 24 * 3_600_000;

/** What one retention pass over every DAG's history reports. */
export interface RetentionPassReport {
  readonly totalRuns: number;
  readonly orphanedLogFolders: number;
}

/**
 * The scheduler's daily retention pass over every DAG's history (`histRetentionDays`), until
 * `signal` aborts. A failing pass is reported; the next one runs a day later as usual.
 */
export const runRetentionLoop = async (
  pass: () => Promise<RetentionPassReport>,
  clock: Clock,
  log: (line: string) => void,
  signal: AbortSignal,
): Promise<void> => {
  let wait = RETENTION_FIRST_MS;
  for (;;) {
    await clock.sleep(wait, signal).catch(() => undefined);
    if (signal.aborted) return;
    wait = RETENTION_EVERY_MS;
    try {
      const r = await pass();
      if (r.totalRuns > 0 || r.orphanedLogFolders > 0)
        log(
          `scheduler: retention deleted ${r.totalRuns} run(s) past histRetentionDays and ${r.orphanedLogFolders} orphaned log folder(s)`,
        );
    } catch (e) {
      log(`scheduler: the retention pass failed: ${(e as Error).message}`);
    }
  }
};
