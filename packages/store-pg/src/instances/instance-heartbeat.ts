import { performance } from 'node:perf_hooks';
import type { RunOwner } from '@trellis/spec';
import { PgDb } from '../db/pg-db.js';

/** What identifies a process in `trellis_instances`: what a run's owner record names. */
export type InstanceIdentity = Pick<RunOwner, 'host' | 'pid' | 'processStart'>;

/** The liveness rule lost-run recovery applies (`PgRunStore.findOrphanedRuns`). */
export interface InstanceLiveness {
  /** An owner not seen for this long (the database's clock) is lost. */
  readonly staleAfterMs: number;
  /**
   * True when this process may judge others: its own beats have landed without a gap for at
   * least `staleAfterMs`. After a database outage, or after this process was frozen, every
   * instance looks unseen for a while; none is judged until all had the time to beat again.
   */
  canJudge(): boolean;
}

export interface InstanceHeartbeatOptions {
  /** `database.url`: the heartbeat has its own connection, so a busy pool never delays it. */
  readonly url: string;
  readonly self: InstanceIdentity;
  /** How often the row is touched (`database.leaseRenewMs`). */
  readonly everyMs: number;
  /** See `InstanceLiveness.staleAfterMs`: 3 x `database.leaseTtlMs` (docs/decisions.md). */
  readonly staleAfterMs: number;
  readonly warn?: (message: string) => void;
}

const BEAT = `INSERT INTO trellis_instances (host, pid, process_start) VALUES ($1, $2, $3)
  ON CONFLICT (host, pid, process_start) DO UPDATE SET last_seen = now()`;

/** Rows of instances unseen for a day are dropped at start: an absent row counts as unseen. */
const PRUNE = `DELETE FROM trellis_instances WHERE last_seen < now() - interval '1 day'`;

/**
 * This process's heartbeat row in `trellis_instances` (docs/ha.md, "Failure modes"): touched every
 * `everyMs` while the store is open, deleted when it closes. Lost-run recovery reads the rows to
 * fail the runs of an instance that stopped beating, on any host (the pid probe only works on
 * its own host).
 */
export class InstanceHeartbeat implements InstanceLiveness {
  readonly #opts: InstanceHeartbeatOptions;
  readonly #db: PgDb;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #lastOk: number | undefined;
  #streakStart = 0;
  #failing = false;

  constructor(opts: InstanceHeartbeatOptions) {
    this.#opts = opts;
    this.#db = new PgDb({
      url: opts.url,
      poolSize: 1,
      connectTimeoutMs: Math.max(1000, opts.everyMs * 2),
      queryTimeoutMs: Math.max(1000, opts.everyMs * 2),
      ...(opts.warn ? { warn: opts.warn } : {}),
    });
  }

  get staleAfterMs(): number {
    return this.#opts.staleAfterMs;
  }

  /** Longest gap between two beats that keeps a streak going: a lease TTL (a third of the bound). */
  get #maxGap(): number {
    return this.#opts.staleAfterMs / 3;
  }

  /** Writes the first beat (errors: the database unreachable), then beats on a timer. */
  async start(): Promise<void> {
    await this.#db.query(PRUNE);
    await this.#beat();
    this.#schedule();
  }

  canJudge(): boolean {
    if (this.#lastOk === undefined) return false;
    const now = performance.now();
    return now - this.#lastOk <= this.#maxGap && now - this.#streakStart >= this.staleAfterMs;
  }

  /** Stops beating and deletes the row (a clean stop: its runs are ended by then). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    const { host, pid, processStart } = this.#opts.self;
    await this.#db
      .query('DELETE FROM trellis_instances WHERE host = $1 AND pid = $2 AND process_start = $3', [
        host,
        pid,
        processStart,
      ])
      .catch(() => undefined); // the database away: the row ages out
    await this.#db.end();
  }

  async #beat(): Promise<void> {
    const { host, pid, processStart } = this.#opts.self;
    await this.#db.query(BEAT, [host, pid, processStart]);
    const now = performance.now();
    if (this.#lastOk === undefined || now - this.#lastOk > this.#maxGap) this.#streakStart = now;
    this.#lastOk = now;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#beat().then(
        () => {
          if (this.#failing) this.#opts.warn?.('instance heartbeat: written again');
          this.#failing = false;
          this.#schedule();
        },
        (e: unknown) => {
          if (!this.#failing)
            this.#opts.warn?.(`instance heartbeat not written (retried): ${(e as Error).message}`);
          this.#failing = true;
          this.#schedule();
        },
      );
    }, this.#opts.everyMs);
    this.#timer.unref();
  }
}
