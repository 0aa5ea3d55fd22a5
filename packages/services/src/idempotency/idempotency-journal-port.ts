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

/** A request claiming its key in a shared journal ({@link IdempotencyJournal.claim}). */
export interface KeyClaimRequest {
  readonly key: string;
  readonly fingerprint: string;
  readonly request: string;
  /** Now, by the caller's clock (Unix ms). */
  readonly nowMs: number;
  /** A run remembered longer than this is expired: the key is claimed again. */
  readonly ttlMs: number;
}

/**
 * What a claim found: the key is now this request's to fill (`claimed`), or it holds a run
 * (`done`), or another request, on this or another instance, is still creating its run
 * (`pending`).
 */
export type KeyClaim =
  | {
      readonly state: 'claimed';
      /**
       * The id to create the run under, chosen when the key was first claimed; absent: the
       * trigger picks one. Kept when a request with the same body takes over a pending claim
       * whose owner died ({@link takenOver}): that owner may have created the run under it.
       */
      readonly runId?: string;
      /** This claim took over a pending claim of the same request (its run may exist). */
      readonly takenOver?: boolean;
      /** Records the run the trigger created (only while this claim still holds the key). */
      fill(entry: IdempotencyEntry): Promise<void>;
      /** Gives the key up: the trigger failed (only while this claim still holds it). */
      release(): Promise<void>;
    }
  | { readonly state: 'done'; readonly entry: IdempotencyEntry }
  | {
      readonly state: 'pending';
      readonly fingerprint: string;
      readonly request: string;
    };

/**
 * Where idempotency keys outlive a restart (`FsIdempotencyJournal` in @trellis/store: one small
 * file per key hash under the data dir; `PgIdempotencyJournal` in @trellis/store-pg: one table
 * shared by every instance). Bounded: `put` may drop the oldest entries.
 */
export interface IdempotencyJournal {
  /** The entry of `key`, or undefined (never stored, or removed). */
  get(key: string): Promise<IdempotencyEntry | undefined>;
  put(entry: IdempotencyEntry): Promise<void>;
  /** Removes `key`'s entry (expired). */
  remove(key: string): Promise<void>;
  /**
   * Only in a journal shared by several processes: takes the key for one request atomically
   * across all of them (a pending claim whose owner died is taken over once its bound passed).
   * Without it, requests are serialised in this process only.
   */
  claim?(req: KeyClaimRequest): Promise<KeyClaim>;
}
