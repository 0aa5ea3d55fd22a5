import type { FakeClock } from '@trellis/testkit';

/**
 * The scheduler role's collaborators that the role tests leave idle: no run to start, stop or
 * find lost, queues that pass at once (or as `reconcile` says), nothing to retain. Each test
 * adds the lease, fires and DAGs it is about.
 */
export const idleRoleDeps = (
  clock: FakeClock,
  lines: string[],
  reconcile: () => Promise<void> = () => Promise.resolve(),
) => ({
  clock,
  runs: {
    startLoaded: () => Promise.resolve({ record: { dagRunId: 'r1' }, queued: false }),
    stopAll: () => Promise.resolve([]),
    restart: () => Promise.resolve(undefined),
    listRuns: () => Promise.resolve([]),
  },
  queues: { reconcile, runsEnded: () => undefined, releaseQueues: () => undefined },
  lostRuns: {
    store: { findOrphanedRuns: () => Promise.resolve([]), saveRun: () => Promise.resolve() },
    clock,
    processes: { processStartTime: () => undefined },
  },
  retentionPass: () => Promise.resolve({ totalRuns: 0, orphanedLogFolders: 0 }),
  log: (l: string) => lines.push(l),
});
