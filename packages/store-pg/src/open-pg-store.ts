import type { Clock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { PgDb } from './db/pg-db.js';
import { migrate } from './migrate/migrations.js';
import { PgRunStore } from './runs/pg-run-store.js';

export interface OpenPgStoreOptions {
  /** `database.url` (`SVC_DATABASE_URL`). */
  readonly url: string;
  /** `database.poolSize` (`SVC_DATABASE_POOL_SIZE`). */
  readonly poolSize: number;
  /** The log folder whose paths name the logs (`paths.logDir`). */
  readonly logDir: string;
  readonly clock: Clock;
  readonly warn?: (message: string) => void;
  /** See `PgRunStoreOptions.onRecordSaved`. */
  readonly onRecordSaved?: (record: DagRunRecord) => void;
}

/**
 * What a process does at start with the PostgreSQL store: opens the pool, applies pending
 * migrations (under the advisory lock, so instances starting together apply them once) and
 * returns the store with its pool (to `end` at shutdown).
 */
export const openPgStore = async (
  opts: OpenPgStoreOptions,
): Promise<{ db: PgDb; store: PgRunStore }> => {
  const db = new PgDb({
    url: opts.url,
    poolSize: opts.poolSize,
    ...(opts.warn ? { warn: opts.warn } : {}),
  });
  try {
    await migrate(db);
  } catch (e) {
    await db.end();
    throw e;
  }
  const store = new PgRunStore({
    db,
    logDir: opts.logDir,
    clock: opts.clock,
    ...(opts.warn ? { warn: opts.warn } : {}),
    ...(opts.onRecordSaved ? { onRecordSaved: opts.onRecordSaved } : {}),
  });
  return { db, store };
};
