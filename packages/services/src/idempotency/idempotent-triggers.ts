import { createHash } from 'node:crypto';
import { AppError, ErrorCode, type Clock } from '@trellis/core';
import { serial } from '../admission/serial.js';
import type { IdempotencyEntry, IdempotencyJournal } from './idempotency-journal-port.js';

/** How long a key holds its run: 24 h (docs/decisions.md, "Idempotent triggers"). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** A trigger request as the key protects it. */
export interface KeyedRequest {
  readonly key: string;
  /** The request in words: `POST /dags/etl/start`. */
  readonly request: string;
  /** What must be equal for a replay: route, DAG file and the parsed body. */
  readonly payload: unknown;
}

/** The outcome: the run, and whether it was created by an earlier request with the same key. */
export interface KeyedOutcome<T> {
  readonly dagRunId: string;
  readonly replayed: boolean;
  /** The new trigger's own answer; absent on a replay. */
  readonly result?: T;
}

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` are the same body. */
const canonical = (v: unknown): string => {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
};

/** The fingerprint of a request: SHA-256 of its words and canonical payload. */
export const fingerprintOf = (request: string, payload: unknown): string =>
  createHash('sha256')
    .update(`${request}\n${canonical(payload)}`)
    .digest('hex');

/**
 * Idempotent start and enqueue (beyond the spec: issue 17). The first request with a key runs its
 * trigger and remembers the run; the same key with the same request within 24 h answers that run
 * again; the same key with another request is refused (409 already_exists). Requests with one key
 * are serialised in this process, so concurrent ones start exactly one run. Only a trigger that
 * created a run is remembered: a refused one may be sent again with its key.
 */
export class IdempotentTriggers {
  readonly #chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly deps: {
      readonly journal: IdempotencyJournal;
      readonly clock: Clock;
      /** @default 24 h */
      readonly ttlMs?: number;
    },
  ) {}

  run<T extends { name: string; dagRunId: string }>(
    req: KeyedRequest,
    trigger: () => Promise<T>,
  ): Promise<KeyedOutcome<T>> {
    return serial(this.#chains, req.key, async () => {
      const fingerprint = fingerprintOf(req.request, req.payload);
      const known = await this.#live(req.key);
      if (known) {
        if (known.fingerprint !== fingerprint) throw conflict(req, known);
        return { dagRunId: known.dagRunId, replayed: true };
      }
      const result = await trigger();
      await this.deps.journal.put({
        key: req.key,
        fingerprint,
        request: req.request,
        name: result.name,
        dagRunId: result.dagRunId,
        createdAtMs: this.deps.clock.now().getTime(),
      });
      return { dagRunId: result.dagRunId, replayed: false, result };
    });
  }

  /** The key's entry unless it expired (an expired one is removed). */
  async #live(key: string): Promise<IdempotencyEntry | undefined> {
    const entry = await this.deps.journal.get(key);
    if (!entry) return undefined;
    const ttl = this.deps.ttlMs ?? IDEMPOTENCY_TTL_MS;
    if (this.deps.clock.now().getTime() - entry.createdAtMs < ttl) return entry;
    await this.deps.journal.remove(key);
    return undefined;
  }
}

const conflict = (req: KeyedRequest, known: IdempotencyEntry): AppError =>
  new AppError(
    ErrorCode.AlreadyExists,
    `Idempotency-Key "${req.key}" was used within the last 24 h for another request (${known.request} with a different body, which created run ${known.dagRunId} of DAG "${known.name}"): send that request's exact body to get its run again, or use a new key for a new run`,
    { idempotencyKey: req.key, dagRunId: known.dagRunId, name: known.name },
  );
