import type { Clock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { currentOwner } from '@trellis/store';
import { PgDb } from './db/pg-db.js';
import { InstanceHeartbeat } from './instances/instance-heartbeat.js';
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
  /**
   * This process's heartbeat in `trellis_instances` (`InstanceHeartbeat`): how often it beats
   * (`database.leaseRenewMs`) and after how long unseen an instance's runs are lost (3 x
   * `database.leaseTtlMs`, docs/decisions.md). @default every 1000 ms, stale after 9000 ms
   */
  readonly heartbeat?: { readonly everyMs: number; readonly staleAfterMs: number };
}

/** The PostgreSQL store a process opened, and how to close it (heartbeat row, then pool). */
export interface OpenedPgStore {
  readonly db: PgDb;
  readonly store: PgRunStore;
  close(): Promise<void>;
}

/**
 * What a process does at start with the PostgreSQL store: opens the pool, applies pending
 * migrations (under the advisory lock, so instances starting together apply them once), writes
 * its first heartbeat row and returns the store with its pool (to `close` at shutdown).
 */
export const openPgStore = async (opts: OpenPgStoreOptions): Promise<OpenedPgStore> => {
  const db = new PgDb({
    url: opts.url,
    poolSize: opts.poolSize,
    ...(opts.warn ? { warn: opts.warn } : {}),
  });
  const heartbeat = new InstanceHeartbeat({
    url: opts.url,
    self: currentOwner(),
    ...(opts.heartbeat ?? { everyMs: 1000, staleAfterMs: 9000 }),
    ...(opts.warn ? { warn: opts.warn } : {}),
  });
  try {
    await migrate(db);
    await heartbeat.start();
  } catch (e) {
    await heartbeat.stop().catch(() => undefined);
    await db.end();
    throw e;
  }
  const store = new PgRunStore({
    db,
    logDir: opts.logDir,
    clock: opts.clock,
    ...(opts.warn ? { warn: opts.warn } : {}),
    ...(opts.onRecordSaved ? { onRecordSaved: opts.onRecordSaved } : {}),
    liveness: heartbeat,
  });
  const close = async (): Promise<void> => {
    await heartbeat.stop();
    await db.end();
  };
  return { db, store, close };
};
