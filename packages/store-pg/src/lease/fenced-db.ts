import type pg from 'pg';
import type { PgDb, Queryable } from '../db/pg-db.js';

/** The lease a leader's writes are fenced by: its row, this holder, and the token it holds. */
export interface Fence {
  /** The lease row's name (`scheduler`). */
  readonly lease: string;
  /** This instance's holder string (`host:pid:incarnation`). */
  readonly holder: string;
  /** The token this instance holds now; undefined when it holds none. */
  token(): number | undefined;
}

/** A leader's write refused because the lease row no longer has this holder and token. */
export class FencedWriteError extends Error {
  constructor(
    readonly lease: string,
    readonly token: number | undefined,
  ) {
    super(
      `this instance's write as leader was refused: lease "${lease}" ${token === undefined ? 'is not held by it' : `token ${token} is stale (another instance took the lead)`}; the instance steps down at its next renewal and the new leader does this work`,
    );
    this.name = 'FencedWriteError';
  }
}

/**
 * Locks the lease row (shared) while it still names this holder with this token and has not
 * expired: a take-over (an UPDATE of that row) waits until the transaction ends, so no write made
 * under the lock lands after a newer token exists.
 */
const CHECK = `SELECT 1 FROM trellis_leases WHERE name = $1 AND holder = $2 AND token = $3
  AND expires_at > now() FOR SHARE`;

/**
 * A view of `db` whose every statement runs in a transaction that first checks the fence (the
 * leader's fencing token, docs/ha.md): a store built on it (`new PgRunStore({ db: fenced })`)
 * writes only while this instance leads. A refused statement throws {@link FencedWriteError}
 * (after `onRefused`) and changes nothing.
 */
export const fencedDb = (db: PgDb, fence: Fence, onRefused?: (e: FencedWriteError) => void) => {
  const guard = async (q: Queryable): Promise<void> => {
    const token = fence.token();
    const held =
      token !== undefined && (await q.query(CHECK, [fence.lease, fence.holder, token])).rowCount;
    if (held) return;
    const e = new FencedWriteError(fence.lease, token);
    onRefused?.(e);
    throw e;
  };
  const tx = <T>(fn: (q: Queryable) => Promise<T>): Promise<T> =>
    db.tx(async (q) => {
      await guard(q);
      return fn(q);
    });
  const fenced: Pick<PgDb, 'pool' | 'query' | 'tx' | 'end'> = {
    pool: db.pool,
    query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
      tx((q) => q.query<R>(text, values)),
    tx,
    end: () => db.end(),
  };
  return fenced as PgDb;
};
