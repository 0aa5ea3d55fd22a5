import { randomUUID } from 'node:crypto';
import { uuidv7 } from '@trellis/core';
import type {
  IdempotencyEntry,
  IdempotencyJournal,
  KeyClaim,
  KeyClaimRequest,
} from '@trellis/services';
import type { PgDb } from '../db/pg-db.js';

/** Options of {@link PgIdempotencyJournal}. */
export interface PgIdempotencyJournalOptions {
  readonly db: PgDb;
  /**
   * How long a claim may stay pending before another request takes the key over (its owner
   * died between claiming and filling). Far above a trigger's time (creating a run record), so
   * a live owner keeps it. @default 30,000 ms
   */
  readonly pendingForMs?: number;
}

/** How often a claim also deletes expired keys. */
const SWEEP_EVERY_MS = 60 * 60 * 1000;
/** A claim that found its row deleted between two statements tries again, at most this often. */
const CLAIM_TRIES = 5;

interface KeyRow {
  fingerprint: string;
  request: string;
  name: string | null;
  dag_run_id: string | null;
  created_at_ms: string;
}

/** The key for this request: a new row, a pending one past its bound, or an expired run's. */
const CLAIM = `INSERT INTO trellis_idempotency_keys AS k
    (key, fingerprint, request, created_at_ms, claim, pending_until, run_id)
  VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6::double precision / 1000), $8)
  ON CONFLICT (key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
    request = EXCLUDED.request, name = NULL, dag_run_id = NULL,
    created_at_ms = EXCLUDED.created_at_ms, claim = EXCLUDED.claim,
    pending_until = EXCLUDED.pending_until,
    run_id = CASE WHEN k.dag_run_id IS NULL AND k.fingerprint = EXCLUDED.fingerprint
      THEN coalesce(k.run_id, EXCLUDED.run_id) ELSE EXCLUDED.run_id END
  WHERE (k.dag_run_id IS NULL AND k.pending_until <= now())
     OR (k.dag_run_id IS NOT NULL AND k.created_at_ms <= $4 - $7::bigint)
  RETURNING claim, run_id`;

/**
 * A filled key keeps no planned id (`run_id`): an instance from before migration 008 re-claiming
 * it later leaves `run_id` as it finds it, and a request taking that claim over must not adopt
 * this (by then unrelated) run.
 */
const FILL = `UPDATE trellis_idempotency_keys SET name = $3, dag_run_id = $4, created_at_ms = $5,
  pending_until = NULL, run_id = NULL WHERE key = $1 AND claim = $2 AND dag_run_id IS NULL`;

const PUT = `INSERT INTO trellis_idempotency_keys
    (key, fingerprint, request, name, dag_run_id, created_at_ms, claim)
  VALUES ($1, $2, $3, $4, $5, $6, $7)
  ON CONFLICT (key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
    request = EXCLUDED.request, name = EXCLUDED.name, dag_run_id = EXCLUDED.dag_run_id,
    created_at_ms = EXCLUDED.created_at_ms, claim = EXCLUDED.claim, pending_until = NULL,
    run_id = NULL`;

/**
 * Idempotency keys in PostgreSQL (`trellis_idempotency_keys`), shared by every instance on the
 * database (docs/decisions.md, "Idempotency keys across instances"). `claim` inserts a pending
 * row atomically (`INSERT ... ON CONFLICT`), so of concurrent requests with one key on any
 * instances exactly one creates the run; the others find it pending or done. Expired keys are
 * deleted at most once an hour by a claim.
 */
export class PgIdempotencyJournal implements IdempotencyJournal {
  readonly #db: PgDb;
  readonly #pendingForMs: number;
  #lastSweepMs = -Infinity;

  constructor(opts: PgIdempotencyJournalOptions) {
    this.#db = opts.db;
    this.#pendingForMs = opts.pendingForMs ?? 30_000;
  }

  async get(key: string): Promise<IdempotencyEntry | undefined> {
    const row = await this.#row(key);
    return row ? entryOf(key, row) : undefined;
  }

  async put(e: IdempotencyEntry): Promise<void> {
    const values = [e.key, e.fingerprint, e.request, e.name, e.dagRunId, e.createdAtMs];
    await this.#db.query(PUT, [...values, randomUUID()]);
  }

  async remove(key: string): Promise<void> {
    await this.#db.query('DELETE FROM trellis_idempotency_keys WHERE key = $1', [key]);
  }

  async claim(req: KeyClaimRequest): Promise<KeyClaim> {
    await this.#sweep(req);
    for (let i = 0; i < CLAIM_TRIES; i++) {
      const id = randomUUID();
      // the run's id, chosen now: a request taking this claim over finds the run made under it
      const runId = uuidv7(req.nowMs);
      const won = await this.#db.query<{ run_id: string }>(CLAIM, [
        ...[req.key, req.fingerprint, req.request, req.nowMs, id],
        ...[this.#pendingForMs, req.ttlMs, runId],
      ]);
      const planned = won.rows[0]?.run_id;
      if (planned !== undefined) return this.#claimed(req.key, id, planned, planned !== runId);
      const row = await this.#row(req.key);
      if (!row) continue; // released or swept since the insert: claim again
      const entry = entryOf(req.key, row);
      if (entry) return { state: 'done', entry };
      return { state: 'pending', fingerprint: row.fingerprint, request: row.request };
    }
    throw new Error(`Idempotency-Key "${req.key}" changed hands ${CLAIM_TRIES} times in a row`);
  }

  #claimed(key: string, id: string, runId: string, takenOver: boolean): KeyClaim {
    return {
      state: 'claimed',
      runId,
      takenOver,
      fill: async (e) => {
        await this.#db.query(FILL, [key, id, e.name, e.dagRunId, e.createdAtMs]);
      },
      release: async () => {
        await this.#db.query(
          'DELETE FROM trellis_idempotency_keys WHERE key = $1 AND claim = $2 AND dag_run_id IS NULL',
          [key, id],
        );
      },
    };
  }

  async #row(key: string): Promise<KeyRow | undefined> {
    const r = await this.#db.query<KeyRow>(
      `SELECT fingerprint, request, name, dag_run_id, created_at_ms
       FROM trellis_idempotency_keys WHERE key = $1`,
      [key],
    );
    return r.rows[0];
  }

  /** Deletes runs' keys past the TTL and claims pending for over an hour (their owners died). */
  async #sweep(req: KeyClaimRequest): Promise<void> {
    if (req.nowMs - this.#lastSweepMs < SWEEP_EVERY_MS) return;
    this.#lastSweepMs = req.nowMs;
    await this.#db.query(
      `DELETE FROM trellis_idempotency_keys WHERE (dag_run_id IS NOT NULL AND created_at_ms <= $1)
       OR (dag_run_id IS NULL AND pending_until < now() - interval '1 hour')`,
      [req.nowMs - req.ttlMs],
    );
  }
}

/** The key's run, or undefined while the row is pending. */
const entryOf = (key: string, row: KeyRow): IdempotencyEntry | undefined =>
  row.dag_run_id === null || row.name === null
    ? undefined
    : {
        key,
        fingerprint: row.fingerprint,
        request: row.request,
        name: row.name,
        dagRunId: row.dag_run_id,
        createdAtMs: Number(row.created_at_ms),
      };
