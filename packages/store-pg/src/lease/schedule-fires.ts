import type { PgDb } from '../db/pg-db.js';

/** How the leader keeps the fire ledger short (docs/decisions.md, "Pruning the schedule-fire ledger"). */
export interface FirePruning {
  readonly keepMs: number;
  readonly everyMs: number;
  readonly warn: (line: string) => void;
}

const DEFAULT_PRUNING: FirePruning = {
  keepMs: 24 * 3_600_000,
  everyMs: 3_600_000,
  warn: (line) => console.warn(line),
};

/**
 * Schedule fires in the database: `claim` records that a DAG's schedule fired for the time
 * `at`, once across every instance (the first claim wins), so a fire is neither missed by a
 * hand-over nor doubled by two schedulers.
 */
export class PgScheduleFires {
  readonly #prune: FirePruning;
  #prunedAt = 0;

  constructor(
    private readonly db: PgDb,
    private readonly instance: string,
    pruning: Partial<FirePruning> = {},
  ) {
    this.#prune = { ...DEFAULT_PRUNING, ...pruning };
  }

  /** True for the one caller that claimed the fire of `dagName` at `at`; false for the rest. */
  async claim(dagName: string, at: Date): Promise<boolean> {
    const r = await this.db.query(
      `INSERT INTO trellis_schedule_fires (dag_name, fire_at, fired_by) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING`,
      [dagName, at, this.instance],
    );
    return r.rowCount === 1;
  }

  /**
   * `claim` fenced by a lease this instance (as `instance`) holds with `token`: the fire is
   * recorded only while the lease row still has that holder and token and has not expired, in
   * the same statement, so a leader that lost the lease (frozen past it, cut off) records and
   * acts on nothing. `fenced` when the lease check refused it, `taken` when another claimed it.
   */
  async claimFenced(
    dagName: string,
    at: Date,
    fence: { readonly lease: string; readonly token: number },
  ): Promise<'claimed' | 'taken' | 'fenced'> {
    const r = await this.db.query<{ held: boolean; claimed: boolean }>(
      `WITH lease AS (SELECT 1 FROM trellis_leases WHERE name = $4 AND holder = $3 AND token = $5
         AND expires_at > now()),
       ins AS (INSERT INTO trellis_schedule_fires (dag_name, fire_at, fired_by)
         SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM lease) ON CONFLICT DO NOTHING RETURNING 1)
       SELECT EXISTS (SELECT 1 FROM lease) AS held, EXISTS (SELECT 1 FROM ins) AS claimed`,
      [dagName, at, this.instance, fence.lease, fence.token],
    );
    const row = r.rows[0];
    if (row?.claimed !== true) return row?.held === true ? 'taken' : 'fenced';
    await this.#pruneNow();
    return 'claimed';
  }

  /**
   * Deletes fires older than `keepMs` except the newest of all (a new leader resumes from it),
   * at most once per `everyMs`: run by the leader after a claim, so the ledger stays about a
   * day long whatever the schedules. A failed prune is reported and tried at the next claim.
   */
  async #pruneNow(): Promise<void> {
    const now = Date.now();
    if (now - this.#prunedAt < this.#prune.everyMs) return;
    this.#prunedAt = now;
    try {
      await this.db.query(
        `DELETE FROM trellis_schedule_fires WHERE fire_at < $1
           AND fire_at < (SELECT max(fire_at) FROM trellis_schedule_fires)`,
        [new Date(now - this.#prune.keepMs)],
      );
    } catch (e) {
      this.#prunedAt = 0;
      this.#prune.warn(
        `scheduler: old schedule fires could not be pruned (tried again at the next fire): ${e instanceof Error ? e.message : String(e)}`,
      );
    }
  }

  /** The latest fire time recorded for any DAG, or undefined. */
  async lastFireOfAll(): Promise<Date | undefined> {
    const r = await this.db.query<{ at: Date | null }>(
      'SELECT max(fire_at) AS at FROM trellis_schedule_fires',
    );
    return r.rows[0]?.at ?? undefined;
  }

  /**
   * The latest fire time of each ledger key (a DAG, or `stop:`/`restart:` and a DAG) at or after
   * `since`: a new leader resumes each DAG from its own last fire.
   */
  async lastFiresSince(since: Date): Promise<Map<string, Date>> {
    const r = await this.db.query<{ dag_name: string; at: Date }>(
      `SELECT dag_name, max(fire_at) AS at FROM trellis_schedule_fires WHERE fire_at >= $1
       GROUP BY dag_name`,
      [since],
    );
    return new Map(r.rows.map((row) => [row.dag_name, row.at]));
  }

  /** The latest fire time recorded for a DAG, or undefined. */
  async lastFire(dagName: string): Promise<Date | undefined> {
    const r = await this.db.query<{ at: Date | null }>(
      'SELECT max(fire_at) AS at FROM trellis_schedule_fires WHERE dag_name = $1',
      [dagName],
    );
    return r.rows[0]?.at ?? undefined;
  }
}
