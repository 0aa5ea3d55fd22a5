/** A trigger remembered under its Idempotency-Key (docs/api.md, "Idempotent triggers"). */
export interface IdempotencyEntry {
  /** The client's key, as sent. */
  readonly key: string;
  /** Hash of what the request asked for (route, DAG file and body); another request differs. */
  readonly fingerprint: string;
  /** The request in words, for the refusal of a different one ("POST /dags/etl/start"). */
  readonly request: string;
  /** The run the first request created. */
  readonly name: string;
  readonly dagRunId: string;
  /** When the first request created the run (Unix ms); the key expires `ttlMs` after. */
  readonly createdAtMs: number;
}

/**
 * Where idempotency keys outlive a restart (`FsIdempotencyJournal` in @trellis/store: one small
 * file per key hash under the data dir). Bounded: `put` may drop the oldest entries.
 */
export interface IdempotencyJournal {
  /** The entry of `key`, or undefined (never stored, or removed). */
  get(key: string): Promise<IdempotencyEntry | undefined>;
  put(entry: IdempotencyEntry): Promise<void>;
  /** Removes `key`'s entry (expired). */
  remove(key: string): Promise<void>;
}
