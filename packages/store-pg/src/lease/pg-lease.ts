import type { PgDb } from '../db/pg-db.js';

export interface PgLeaseOptions {
  readonly db: PgDb;
  /** The lease's name (`scheduler`). */
  readonly name: string;
  /** Who takes it (host, pid, a random incarnation). */
  readonly holder: string;
  /** How long a lease lasts without a renewal. */
  readonly ttlMs: number;
}

/**
 * A lease in the database, for one holder at a time across instances (the scheduler role): a
 * row with its holder, an expiry and a fencing token that grows at every change of holder, so
 * a write made under an old token can be refused. Times are the database's clock.
 */
export class PgLease {
  #token: number | undefined;

  constructor(private readonly opts: PgLeaseOptions) {}

  /** The token of the lease this holder has, or undefined. */
  get token(): number | undefined {
    return this.#token;
  }

  /** Takes the lease when free or expired (or renews it when held); true when held after. */
  async tryAcquire(): Promise<boolean> {
    const { db, name, holder, ttlMs } = this.opts;
    const r = await db.query<{ token: string }>(
      `INSERT INTO trellis_leases (name, holder, token, expires_at)
       VALUES ($1, $2, 1, now() + $3 * interval '1 millisecond')
       ON CONFLICT (name) DO UPDATE SET holder = $2, expires_at = EXCLUDED.expires_at,
         token = CASE WHEN trellis_leases.holder = $2 THEN trellis_leases.token
                      ELSE trellis_leases.token + 1 END
       WHERE trellis_leases.holder = $2 OR trellis_leases.expires_at < now()
       RETURNING token`,
      [name, holder, ttlMs],
    );
    this.#token = r.rows[0] === undefined ? undefined : Number(r.rows[0].token);
    return this.#token !== undefined;
  }

  /** Extends the lease; false when it was lost (expired and taken by another). */
  async renew(): Promise<boolean> {
    if (this.#token === undefined) return false;
    const r = await this.opts.db.query(
      `UPDATE trellis_leases SET expires_at = now() + $4 * interval '1 millisecond'
       WHERE name = $1 AND holder = $2 AND token = $3`,
      [this.opts.name, this.opts.holder, this.#token, this.opts.ttlMs],
    );
    if (r.rowCount === 0) this.#token = undefined;
    return r.rowCount === 1;
  }

  /**
   * Gives the lease up (when still held). The row stays, expired and held by nobody, so the next
   * holder's token is still one higher than every earlier one: a deleted row would start the
   * tokens again at 1.
   */
  async release(): Promise<void> {
    if (this.#token === undefined) return;
    await this.opts.db.query(
      `UPDATE trellis_leases SET holder = '', expires_at = '-infinity'
       WHERE name = $1 AND holder = $2 AND token = $3`,
      [this.opts.name, this.opts.holder, this.#token],
    );
    this.#token = undefined;
  }

  /** The current holder, when the lease is held and not expired. */
  async holder(): Promise<string | undefined> {
    const r = await this.opts.db.query<{ holder: string }>(
      'SELECT holder FROM trellis_leases WHERE name = $1 AND expires_at >= now()',
      [this.opts.name],
    );
    return r.rows[0]?.holder;
  }
}
