export { PgDb, type PgDbOptions } from './db/pg-db.js';
export { migrate, migrationStatus, type MigrationState } from './migrate/migrations.js';
export { PgRunStore, type PgRunStoreOptions } from './runs/pg-run-store.js';
export { PgLease, type PgLeaseOptions } from './lease/pg-lease.js';
export { PgScheduleFires } from './lease/schedule-fires.js';
export { openPgStore, type OpenPgStoreOptions } from './open-pg-store.js';
