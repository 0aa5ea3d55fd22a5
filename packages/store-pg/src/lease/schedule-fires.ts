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

  /** The latest fire time recorded for a DAG, or undefined. */
  async lastFire(dagName: string): Promise<Date | undefined> {
    const r = await this.db.query<{ at: Date | null }>(
      'SELECT max(fire_at) AS at FROM trellis_schedule_fires WHERE dag_name = $1',
      [dagName],
    );
    return r.rows[0]?.at ?? undefined;
  }
}
