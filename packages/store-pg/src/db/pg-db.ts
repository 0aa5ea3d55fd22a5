import { setImmediate as nextTurn } from 'node:timers/promises';
import { AppError, ErrorCode } from '@trellis/core';
import pg from 'pg';
import { loopStalls, STALL_MS, type StallSource } from './loop-stalls.js';

/** How to reach the database (`SVC_DATABASE_URL`, `SVC_DATABASE_POOL_SIZE`). */
export interface PgDbOptions {
  /** `postgres://user:password@host:port/database`. */
  readonly url: string;
  /** Connections kept at most. @default 10 */
  readonly poolSize?: number;
  /** How long a query waits for a connection before the store is unavailable. @default 5000 */
  readonly connectTimeoutMs?: number;
  /**
   * How long a query may wait for the server's answer before it fails as unavailable (and its
   * connection is dropped): a server cut off without a reset (a network partition) would
   * otherwise hold the call until TCP gives up, many minutes later. @default 30000
   */
  readonly queryTimeoutMs?: number;
  readonly warn?: (message: string) => void;
  /** When this process did not run (a test gives its own). @default the process's stall timer */
  readonly stalls?: StallSource;
  /**
   * How long in all a call waits for a connection while the server answers the pool's other
   * calls (a busy pool, not a server away) before it fails. @default 30000
   */
  readonly busyWaitMs?: number;
}

/** A query runner: the pool, or one client inside a transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/** SQLSTATE classes and codes meaning "the server is not there right now", not a bad query. */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
]);

/** The pool's connect timer fired (waiting in its queue, or for a new connection). */
const CONNECT_TIMEOUT =
  /timeout exceeded when trying to connect|Connection terminated due to connection timeout/i;

/** True when `e` says the database cannot be reached (refused, cut, shutting down, timed out). */
const isUnavailable = (e: unknown): boolean => {
  if (typeof e !== 'object' || e === null) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_STATES.has(code) || UNAVAILABLE_ERRNOS.has(code)) return true;
    if (code.startsWith('08')) return true; // connection exception class
  }
  const message = (e as { message?: unknown }).message;
  return (
    typeof message === 'string' &&
    (CONNECT_TIMEOUT.test(message) ||
      /Connection terminated|Query read timeout|Client has encountered a connection error|not queryable/i.test(
        message,
      ))
  );
};

/** The pool's connect timer fired (waiting in its queue, or for a new connection): nothing was sent. */
const isConnectTimeout = (e: unknown): boolean =>
  e instanceof Error && CONNECT_TIMEOUT.test(e.message);

/**
 * The typed error of a store call made while PostgreSQL is away: `service_unavailable` (the API
 * answers 503). The pool reconnects by itself, so calls succeed again once it is back.
 */
export const toStoreError = (e: unknown): unknown =>
  isUnavailable(e)
    ? new AppError(
        ErrorCode.ServiceUnavailable,
        `the PostgreSQL store is unavailable (${(e as Error).message}): check that the database in SVC_DATABASE_URL is running and reachable`,
        { store: 'postgres' },
        { cause: e },
      )
    : e;

/** The connection pool of a PostgreSQL store; every failure to reach the server is typed. */
export class PgDb implements Queryable {
  readonly pool: pg.Pool;
  readonly #connectTimeoutMs: number;
  readonly #stalls: StallSource;
  readonly #poolSize: number;
  readonly #busyWaitMs: number;
  /** When (`performance.now()`) the server last answered one of this pool's calls. */
  #answeredAt = -Infinity;

  constructor(opts: PgDbOptions) {
    this.#connectTimeoutMs = opts.connectTimeoutMs ?? 5000;
    this.#stalls = opts.stalls ?? loopStalls();
    this.#poolSize = opts.poolSize ?? 10;
    this.#busyWaitMs = opts.busyWaitMs ?? 30_000;
    this.pool = new pg.Pool({
      connectionString: opts.url,
      max: this.#poolSize,
      connectionTimeoutMillis: this.#connectTimeoutMs,
      query_timeout: opts.queryTimeoutMs ?? 30_000,
      keepAlive: true,
    });
    // an idle client whose server went away: the pool drops it; without a listener Node exits
    this.pool.on('error', (e) => opts.warn?.(`PostgreSQL connection lost: ${e.message}`));
  }

  async query<R extends pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>> {
    try {
      return await this.#connecting(() => this.pool.query<R>(text, values));
    } catch (e) {
      throw toStoreError(e);
    }
  }

  /** Runs `fn` in one transaction (committed when it resolves, rolled back when it throws). */
  async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.#connecting(() => this.pool.connect());
    } catch (e) {
      throw toStoreError(e);
    }
    let broken: unknown;
    // a connection cut between two queries of the transaction: an 'error' event with no
    // listener would end the process; the next query fails and the client is dropped instead
    const onError = (e: Error): void => void (broken ??= e);
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (e) {
      broken = isUnavailable(e) ? e : undefined;
      await client.query('ROLLBACK').catch((r: unknown) => (broken = r));
      throw toStoreError(e);
    } finally {
      client.off('error', onError);
      client.release(broken !== undefined ? (broken as Error) : undefined);
    }
  }

  /**
   * Runs `attempt` (a pool call that first takes a connection). When the pool's connect timer
   * failed it, it is made again (safe: no statement was sent):
   * - once, when this process ran for less than that timeout while it waited: it was frozen
   *   (SIGSTOP) or blocked past the timer's due time, and the timer fired on resuming before the
   *   connection's answer, there all along, was read (`LoopStalls`). Only when a stall of at
   *   least `STALL_MS` was noted within the wait: a timer fires up to a millisecond early by
   *   `performance.now()`, so "ran less than the timeout" alone would retry a real outage now and
   *   then (another whole timeout before the 503);
   * - while the server answered another of the pool's calls during the wait (the pool's
   *   connections were all busy: a burst, not an outage), for `busyWaitMs` in all; then it fails
   *   naming the pool's size and how to raise it.
   */
  async #connecting<T>(attempt: () => Promise<T>): Promise<T> {
    const first = performance.now();
    for (let tries = 0; ; tries++) {
      const from = performance.now();
      try {
        const out = await attempt();
        this.#answeredAt = performance.now();
        return out;
      } catch (e) {
        if (!isConnectTimeout(e)) throw e;
        await nextTurn(); // the stall timer, due in the same timers phase, has noted the stall
        const to = performance.now();
        if (tries === 0 && this.#frozenWithin(from, to)) continue;
        if (this.#answeredAt <= from) throw e;
        if (to - first < this.#busyWaitMs) continue;
        throw new AppError(
          ErrorCode.ServiceUnavailable,
          `the PostgreSQL store is busy: a call waited ${Math.round((to - first) / 1000)} s for one of the pool's ${this.#poolSize} connections while the server answered others: raise SVC_DATABASE_POOL_SIZE (now ${this.#poolSize}) or lower the load`,
          { store: 'postgres' },
        );
      }
    }
  }

  /** True when a stall was noted within `from`..`to` and the process ran less than the timeout. */
  #frozenWithin(from: number, to: number): boolean {
    return (
      this.#stalls.stalledWithin(from, to) >= STALL_MS &&
      this.#stalls.ranWithin(from, to) < this.#connectTimeoutMs
    );
  }

  /** Closes every connection. */
  end(): Promise<void> {
    return this.pool.end();
  }
}
