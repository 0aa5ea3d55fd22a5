export { FsRunStore, type FsRunStoreOptions, type RootOption } from './runs/fs-run-store.js';
export type { RunSummary } from './runs/run-summary.js';
export { toRunSummary } from './runs/run-summary.js';
export type { RunSnapshot } from './runs/run-snapshot.js';
export type { RunFilter } from './runs/run-filter.js';
export { readLogChunk, type LogReadStats, type ReadLogOptions } from './logs/read-log-chunk.js';
export {
  DEFAULT_LOG_LIMIT,
  MAX_LOG_LINES,
  resolveLogWindow,
  type LogChunk,
  type LogQuery,
  type LogWindow,
} from './logs/log-window.js';
export {
  PROCESS_START_TOLERANCE_MS,
  currentOwner,
  isOwnerAlive,
  processStartTime,
} from './owner/process-owner.js';
export { isOrphanedOwner } from './owner/orphan.js';
export { toSafeName } from './layout/safe-name.js';
export { runLogPathIn, stepLogPathsBeside } from './layout/log-locations.js';
export { writeFileAtomic } from './fs/atomic-write.js';
export type { CleanupReport, RetentionDays } from './runs/cleanup-all.js';
export {
  migrateHistory,
  type MigrateHistoryOptions,
  type MigrationIssue,
  type MigrationReport,
} from './migrate/migrate-history.js';
export { LeaseLock, type LeaseHolder, type LeaseLockOptions } from './lock/lease-lock.js';
export { DagFileLoader } from './dags/dag-file-loader.js';
export {
  FsDagStore,
  MINIMAL_DAG_SPEC,
  type FsDagStoreDeps,
  type SuspendFlagsSource,
} from './dags/fs-dag-store.js';
export { SuspendFlags, type DagSuspendFlags } from './dags/suspend-flags.js';
export { dataDirProblem } from './fs/writable-probe.js';
export { LogChunkWriter } from './logs/log-chunk-writer.js';
export { StoreWriteErrors } from './health/store-write-errors.js';
export {
  FsIdempotencyJournal,
  type FsIdempotencyJournalOptions,
} from './idempotency/fs-idempotency-journal.js';
export { FsWebhookJournal } from './webhooks/fs-webhook-journal.js';
export { walkRuns, type WalkedRun } from './runs/walk-runs.js';
