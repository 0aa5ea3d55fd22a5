export { PgDb, type PgDbOptions } from './db/pg-db.js';
export { migrate, migrationStatus, type MigrationState } from './migrate/migrations.js';
export { PgRunStore, type PgRunStoreOptions } from './runs/pg-run-store.js';
export { PgLease, type PgLeaseOptions } from './lease/pg-lease.js';
export { PgScheduleFires } from './lease/schedule-fires.js';
export { openPgStore, type OpenPgStoreOptions } from './open-pg-store.js';
export { copyFilesToPg, type FilesToPgOptions } from './move/files-to-pg.js';
export { exportPgToFiles, type PgToFilesOptions } from './move/pg-to-files.js';
export { reportLines, type KindCount, type MoveReport } from './move/move-report.js';
