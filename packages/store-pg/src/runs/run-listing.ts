import type { RunSummary } from '@trellis/store';
import { toStoreError, type PgDb } from '../db/pg-db.js';
import { listWhere, NEWEST_FIRST, type RunKey } from './run-rows.js';
import { SummaryIndex, type ListFilter } from './summary-index.js';

export interface RunListingOptions {
  readonly db: PgDb;
  /**
   * Runs kept in memory at most (about 1 KB each, docs/ha.md "Sizing"); past it this process
   * lists from the database (one query per listing, slower on long histories). @default 200000
   */
  readonly maxCachedRuns?: number;
  readonly warn?: (message: string) => void;
}

export const DEFAULT_MAX_CACHED_RUNS = 200_000;

/** A stamp no transaction has: the full read takes no tombstones. */
const NO_TOMBSTONES = '9223372036854775807';

/**
 * What changed since the stamp $1 (runs) and $2 (tombstones), and in the same snapshot the
 * oldest transaction still running (the next stamp to read from) and the tombstone floor
 * (migrations/003_runs_change_feed.sql).
 */
const CHANGES = `WITH s AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin,
    pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS xmax,
    (SELECT xid FROM trellis_runs_gone_floor) AS floor,
    (SELECT max(changed_xid) FROM trellis_runs) AS newest)
  SELECT 0 AS kind, root_name, root_run_id, name, dag_run_id, summary, NULL::bigint AS xmin,
    NULL::bigint AS floor, NULL::int AS future FROM trellis_runs WHERE changed_xid >= $1
  UNION ALL SELECT 1, root_name, root_run_id, name, dag_run_id, NULL, NULL, NULL, NULL
    FROM trellis_runs_gone WHERE changed_xid >= $2
  UNION ALL SELECT 2, NULL, NULL, NULL, NULL, NULL, xmin, floor,
    CASE WHEN GREATEST(floor, newest) >= xmax THEN 1 ELSE 0 END FROM s`;

interface ChangeRow {
  kind: number;
  root_name: string;
  root_run_id: string;
  name: string;
  dag_run_id: string;
  summary: RunSummary | null;
  xmin: string | null;
  floor: string | null;
  /** 1 when stamps are ahead of this server's transaction ids (restored from another server). */
  future: number | null;
}

const keyOfRow = (r: ChangeRow): RunKey => ({
  rootName: r.root_name,
  rootRunId: r.root_run_id,
  name: r.name,
  dagRunId: r.dag_run_id,
});

/**
 * The history listing of the PostgreSQL store (`GET /dag-runs`): run summaries kept in this
 * process's memory and brought up to date before every listing by one indexed query for what
 * any process changed or deleted since the last one (a change feed stamped with transaction ids:
 * migrations/003_runs_change_feed.sql). A listing therefore shows every write committed before
 * it was called, this process's or another's, as the query did, without reading or sorting the
 * whole history.
 */
export class RunListing {
  readonly #db: PgDb;
  readonly #max: number;
  readonly #warn: (message: string) => void;
  readonly #index = new SummaryIndex();
  /** Where the next read starts (a transaction id); undefined: read everything. */
  #from: bigint | undefined;
  /** Too many runs for memory: every listing asks the database. */
  #overCap = false;
  #warnedFuture = false;
  #syncedAt = -Infinity;
  /** Changes read from the feed per DAG (a run's own name and its root's), since `#epoch`. */
  readonly #changes = new Map<string, number>();
  /** Raised at every full read (the counts start again). */
  #epoch = 0;
  #running: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

  constructor(opts: RunListingOptions) {
    this.#db = opts.db;
    this.#max = opts.maxCachedRuns ?? DEFAULT_MAX_CACHED_RUNS;
    this.#warn = opts.warn ?? (() => undefined);
  }

  /** Runs in memory now (for the bench and tests). */
  get cachedRuns(): number {
    return this.#index.size;
  }

  /** Summaries newest first; `maxStaleMs` lets a listing skip the read when one was that recent. */
  async list(filter: ListFilter = {}): Promise<RunSummary[]> {
    if (this.#overCap) return this.#fromDatabase(filter);
    const stale = filter.maxStaleMs ?? 0;
    if (!(stale > 0 && performance.now() - this.#syncedAt < stale)) await this.#fresh();
    return this.#overCap ? this.#fromDatabase(filter) : this.#index.select(filter);
  }

  /**
   * Text that changes whenever a run row of the DAG (its own runs, or children stored under
   * them) was written or deleted, by any process, between the reads of two calls: each call
   * reads the change feed first, as a listing does, and counts per DAG every row it brings.
   * A row read again (the feed reads from the oldest running transaction) only changes the
   * text once more. Undefined past the memory limit (no feed is read then).
   */
  async changeStamp(dagName: string): Promise<string | undefined> {
    if (this.#overCap) return undefined;
    await this.#fresh();
    if (this.#overCap) return undefined;
    return `${this.#epoch}:${this.#changes.get(dagName) ?? 0}`;
  }

  #count(name: string): void {
    this.#changes.set(name, (this.#changes.get(name) ?? 0) + 1);
  }

  /**
   * Resolves after a read that started after this call, so a write that completed before the
   * call shows; callers arriving while a read runs share the one queued behind it.
   */
  #fresh(): Promise<void> {
    if (this.#queued !== undefined) return this.#queued;
    if (this.#running === undefined) return this.#start();
    const queued = this.#running
      .catch(() => undefined)
      .then(() => {
        this.#queued = undefined;
        return this.#start();
      });
    this.#queued = queued;
    return queued;
  }

  #start(): Promise<void> {
    const started = performance.now();
    const p = this.#read().then(() => {
      this.#syncedAt = started;
    });
    this.#running = p;
    void p
      .catch(() => undefined)
      .then(() => {
        if (this.#running === p) this.#running = undefined;
      });
    return p;
  }

  async #read(): Promise<void> {
    const from = this.#from;
    // a named statement: parsed and planned once per connection, not at every listing
    const r = await this.#db.pool
      .query<ChangeRow>({
        name: 'trellis_run_changes',
        text: CHANGES,
        values: from === undefined ? ['0', NO_TOMBSTONES] : [String(from), String(from)],
      })
      .catch((e: unknown) => {
        throw toStoreError(e);
      });
    const meta = r.rows.find((x) => x.kind === 2);
    const xmin = BigInt(meta?.xmin ?? '0');
    if (meta?.future === 1 && !this.#warnedFuture) {
      this.#warnedFuture = true;
      this.#warn(
        'runs in the PostgreSQL store carry change stamps ahead of this server (restored from another server?): listings read every run each time until you run UPDATE trellis_runs SET changed_xid = 0; TRUNCATE trellis_runs_gone; UPDATE trellis_runs_gone_floor SET xid = 0 (docs/ha.md, "Backup and restore")',
      );
    }
    if (from !== undefined && BigInt(meta?.floor ?? '0') >= from) {
      // tombstones this process had not read were pruned: read everything again
      this.#from = undefined;
      return this.#read();
    }
    if (from === undefined) {
      this.#index.clear();
      this.#changes.clear();
      this.#epoch++;
    }
    for (const row of r.rows) {
      if (row.kind === 2) continue;
      this.#count(row.name);
      if (row.root_name !== row.name) this.#count(row.root_name);
    }
    for (const row of r.rows) if (row.kind === 1) this.#index.remove(keyOfRow(row));
    for (const row of r.rows)
      if (row.kind === 0 && row.summary !== null) this.#index.put(keyOfRow(row), row.summary);
    this.#from = xmin;
    if (this.#index.size > this.#max) {
      this.#warn(
        `over ${this.#max} runs in the PostgreSQL store: listings now read the database each time instead of memory; delete old runs (retention) or raise the limit`,
      );
      this.#overCap = true;
      this.#index.clear();
    }
  }

  /** The listing as one query (filters as columns; the summaries are not parsed in SQL). */
  async #fromDatabase(filter: ListFilter): Promise<RunSummary[]> {
    const { where, values } = listWhere(filter);
    const limit =
      filter.limit === undefined ? '' : ` LIMIT ${Math.max(0, Math.floor(filter.limit))}`;
    const r = await this.#db.query<{ summary: RunSummary }>(
      `SELECT summary FROM trellis_runs WHERE ${where} ${NEWEST_FIRST}${limit}`,
      values,
    );
    return r.rows.map((x) => x.summary);
  }
}
