import type { Clock, Config } from '@trellis/core';
import type { CoordinatorStore, LogChunkSink } from '@trellis/coordinator';
import type { RetentionStore } from '@trellis/scheduler';
import type { RunReadStore, RunSnapshotData, RunStorePort, StoreScope } from '@trellis/services';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import type { PgDb } from '@trellis/store-pg';
import {
  FsRunStore,
  type CleanupReport,
  type DagSuspendFlags,
  type RetentionDays,
  type RunFilter,
  type RunSummary,
  type StoreWriteErrors,
} from '@trellis/store';

/**
 * The run store as a process's runtime uses it, whichever store `SVC_DATABASE_URL` selects: the
 * file store (`FsRunStore`) or the PostgreSQL store (`PgRunStore`). Only ports: nothing here is
 * one store's own (docs/architecture.md).
 */
export interface RuntimeStore extends RunStorePort, RunReadStore, CoordinatorStore, RetentionStore {
  /** Failed writes (`GET /health`, `svc_store_write_errors_total`). */
  readonly writeErrors: StoreWriteErrors;
  listRuns(filter: RunFilter): Promise<RunSummary[]>;
  getRun(ref: RunRef, scope?: StoreScope): Promise<DagRunRecord>;
  getSnapshot(ref: RunRef, scope?: StoreScope): Promise<RunSnapshotData>;
  /** The DAG list's latest run, at most `maxStaleMs` behind other processes. */
  latestSummary(dagName: string, maxStaleMs: number): Promise<RunSummary | undefined>;
  cleanupAll(days: RetentionDays): Promise<CleanupReport>;
  deleteRun(ref: RunRef): Promise<void>;
}

/** The store a runtime opened, and how to close it at shutdown (the database pool). */
export interface OpenedStore {
  readonly store: RuntimeStore;
  /** `postgres` when `database.url` is set, else `files`. */
  readonly kind: 'files' | 'postgres';
  /** The database pool of the PostgreSQL store (the leader lease, metrics); else undefined. */
  readonly database?: PgDb;
  /**
   * Where the coordinator writes workers' log chunks on the PostgreSQL store (into the
   * database, once across coordinators); undefined on files (the coordinator's default).
   */
  readonly logChunks?: LogChunkSink;
  /**
   * The DAGs' suspend flags in the database, shared by every instance (docs/decisions.md);
   * undefined on files, whose flags stay files under `paths.dataDir/suspend`.
   */
  readonly suspendFlags?: DagSuspendFlags;
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  readonly clock: Clock;
  readonly warn: (message: string) => void;
  readonly onRecordSaved: (record: DagRunRecord) => void;
  readonly userHome?: string | undefined;
}

/**
 * Opens the store the config selects: PostgreSQL when `database.url` (`SVC_DATABASE_URL`) is
 * set, with pending migrations applied under the advisory lock; else the files under
 * `SVC_HOME`. Errors: the database unreachable or a migration failing (named, with the fix).
 */
export const openRuntimeStore = async (
  config: Readonly<Config>,
  opts: OpenStoreOptions,
): Promise<OpenedStore> => {
  if (config.database !== undefined) {
    const { openPgStore, PgLogChunkWriter, PgSuspendFlags } = await import('@trellis/store-pg');
    const ttlMs = config.database.leaseTtlMs;
    const opened = await openPgStore({
      url: config.database.url,
      poolSize: config.database.poolSize,
      logDir: config.paths.logDir,
      clock: opts.clock,
      warn: opts.warn,
      onRecordSaved: opts.onRecordSaved,
      // an instance unseen for three lease TTLs has lost its runs (docs/decisions.md)
      heartbeat: { everyMs: config.database.leaseRenewMs, staleAfterMs: 3 * ttlMs },
    });
    const { db, store } = opened;
    const logChunks = new PgLogChunkWriter(store.logs, {
      logDir: config.paths.logDir,
      runLogOf: async (run, root) => (await store.getRun(run, { root })).log,
      warn: opts.warn,
    });
    const suspendFlags = await PgSuspendFlags.open({
      db,
      url: config.database.url,
      warn: opts.warn,
    }).catch(async (e: unknown) => {
      await opened.close();
      throw e;
    });
    const close = async (): Promise<void> => {
      await suspendFlags.stop();
      await opened.close();
    };
    return { store, kind: 'postgres', database: db, logChunks, suspendFlags, close };
  }
  const store = new FsRunStore({
    dataDir: config.paths.dataDir,
    logDir: config.paths.logDir,
    clock: opts.clock,
    warn: opts.warn,
    onRecordSaved: opts.onRecordSaved,
    // a DAG's `logDir: ~/...` means the home the config's own `~` means
    ...(opts.userHome ? { userHome: opts.userHome } : {}),
  });
  return { store, kind: 'files', close: () => Promise.resolve() };
};
