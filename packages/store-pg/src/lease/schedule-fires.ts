import type { PgDb } from '../db/pg-db.js';

/**
 * Schedule fires in the database: `claim` records that a DAG's schedule fired for the time
 * `at`, once across every instance (the first claim wins), so a fire is neither missed by a
 * hand-over nor doubled by two schedulers.
 */
export class PgScheduleFires {
  constructor(
    private readonly db: PgDb,
    private readonly instance: string,
  ) {}

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
    if (row?.claimed === true) return 'claimed';
    return row?.held === true ? 'taken' : 'fenced';
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
