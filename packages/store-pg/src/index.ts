export { PgDb, type PgDbOptions } from './db/pg-db.js';
export {
  MIGRATION_LOCK_KEY,
  migrate,
  migrationStatus,
  type MigrationState,
} from './migrate/migrations.js';
export { PgRunStore, type PgRunStoreOptions } from './runs/pg-run-store.js';
export { PgLease, type PgLeaseOptions } from './lease/pg-lease.js';
export { PgScheduleFires } from './lease/schedule-fires.js';
export { fencedDb, FencedWriteError, type Fence } from './lease/fenced-db.js';
export { openPgStore, type OpenedPgStore, type OpenPgStoreOptions } from './open-pg-store.js';
export {
  InstanceHeartbeat,
  type InstanceHeartbeatOptions,
  type InstanceIdentity,
  type InstanceLiveness,
} from './instances/instance-heartbeat.js';
export { copyFilesToPg, type FilesToPgOptions } from './move/files-to-pg.js';
export { exportPgToFiles, type PgToFilesOptions } from './move/pg-to-files.js';
export { reportLines, type KindCount, type MoveReport } from './move/move-report.js';
export { PgLogChunkWriter, type PgLogChunkWriterOptions } from './logs/pg-log-chunks.js';
export {
  PgSuspendFlags,
  SUSPEND_FLAGS_CHANNEL,
  type PgSuspendFlagsOptions,
} from './dags/pg-suspend-flags.js';
export {
  PgIdempotencyJournal,
  type PgIdempotencyJournalOptions,
} from './idempotency/pg-idempotency-journal.js';
