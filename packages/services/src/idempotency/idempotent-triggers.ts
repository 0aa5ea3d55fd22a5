import { createHash } from 'node:crypto';
import { AppError, ErrorCode, type Clock } from '@trellis/core';
import { serial } from '../admission/serial.js';
import type {
  IdempotencyEntry,
  IdempotencyJournal,
  KeyClaim,
  KeyClaimRequest,
} from './idempotency-journal-port.js';

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
  /** The trigger's answer; absent when the run was found in the journal. */
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

/** How a request that finds its key pending waits: 40 polls 250 ms apart (10 s). */
const PENDING_WAIT = { everyMs: 250, attempts: 40 };

/**
 * The run a keyed trigger is to create under the key's own id (a shared journal's claim):
 * `adopt` when a predecessor with the same request may have created it before it died; the
 * trigger then answers that run (`adopted`) when the id is taken.
 */
export interface RunPlan {
  readonly dagRunId: string;
  readonly adopt: boolean;
}

/** What a trigger answers: its run; `adopted` when it is the predecessor's (see {@link RunPlan}). */
interface TriggerRun {
  readonly name: string;
  readonly dagRunId: string;
  readonly adopted?: boolean;
}

type Trigger<T> = (plan?: RunPlan) => Promise<T>;
type Claimed = Extract<KeyClaim, { state: 'claimed' }>;

/**
 * Idempotent start and enqueue (beyond the spec: issue 17). The first request with a key runs its
 * trigger and remembers the run; the same key with the same request within 24 h answers that run
 * again; the same key with another request is refused (409 already_exists). Requests with one key
 * are serialised in this process, so concurrent ones start exactly one run; with a shared journal
 * (one that can `claim`, the PostgreSQL one) across processes too: the first claims the key, a
 * second that finds it pending waits for the run (bounded, then 409 already_running: retry).
 * Only a trigger that created a run is remembered: a refused one may be sent again with its key.
 */
export class IdempotentTriggers {
  readonly #chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly deps: {
      readonly journal: IdempotencyJournal;
      readonly clock: Clock;
      /** @default 24 h */
      readonly ttlMs?: number;
      /** With a shared journal: how a request finding its key pending polls. @default 250 ms x 40 */
      readonly pendingWait?: { readonly everyMs: number; readonly attempts: number };
    },
  ) {}

  run<T extends TriggerRun>(req: KeyedRequest, trigger: Trigger<T>): Promise<KeyedOutcome<T>> {
    return serial(this.#chains, req.key, () => {
      const fingerprint = fingerprintOf(req.request, req.payload);
      const claim = this.deps.journal.claim?.bind(this.deps.journal);
      return claim
        ? this.#shared(req, fingerprint, trigger, claim)
        : this.#local(req, fingerprint, trigger);
    });
  }

  /** The journal of this process only (files): the chain above is the whole serialisation. */
  async #local<T extends TriggerRun>(
    req: KeyedRequest,
    fingerprint: string,
    trigger: Trigger<T>,
  ): Promise<KeyedOutcome<T>> {
    const known = await this.#live(req.key);
    if (known) {
      if (known.fingerprint !== fingerprint) throw conflict(req, known);
      return { dagRunId: known.dagRunId, replayed: true };
    }
    const result = await trigger();
    await this.deps.journal.put(this.#entry(req, fingerprint, result));
    return { dagRunId: result.dagRunId, replayed: false, result };
  }

  /** A journal shared by processes: claim the key, or replay, or wait for its pending run. */
  async #shared<T extends TriggerRun>(
    req: KeyedRequest,
    fingerprint: string,
    trigger: Trigger<T>,
    claim: (req: KeyClaimRequest) => Promise<KeyClaim>,
  ): Promise<KeyedOutcome<T>> {
    const wait = this.deps.pendingWait ?? PENDING_WAIT;
    for (let attempt = 0; ; attempt++) {
      const found = await claim({
        key: req.key,
        fingerprint,
        request: req.request,
        nowMs: this.deps.clock.now().getTime(),
        ttlMs: this.deps.ttlMs ?? IDEMPOTENCY_TTL_MS,
      });
      if (found.state === 'claimed') return this.#create(req, fingerprint, trigger, found);
      if (found.state === 'done') {
        if (found.entry.fingerprint !== fingerprint) throw conflict(req, found.entry);
        return { dagRunId: found.entry.dagRunId, replayed: true };
      }
      if (found.fingerprint !== fingerprint) throw pendingConflict(req, found.request);
      if (attempt >= wait.attempts) throw stillPending(req, wait.everyMs * wait.attempts);
      await this.deps.clock.sleep(wait.everyMs);
    }
  }

  /** Runs the trigger under this request's claim: fills the key, or gives it up on failure. */
  async #create<T extends TriggerRun>(
    req: KeyedRequest,
    fingerprint: string,
    trigger: Trigger<T>,
    claim: Claimed,
  ): Promise<KeyedOutcome<T>> {
    let result: T;
    try {
      result = await trigger(
        claim.runId === undefined
          ? undefined
          : { dagRunId: claim.runId, adopt: claim.takenOver === true },
      );
    } catch (e) {
      await claim.release().catch(() => undefined); // else the key frees when its claim expires
      throw e;
    }
    await claim.fill(this.#entry(req, fingerprint, result));
    return { dagRunId: result.dagRunId, replayed: result.adopted === true, result };
  }

  #entry(
    req: KeyedRequest,
    fingerprint: string,
    run: { name: string; dagRunId: string },
  ): IdempotencyEntry {
    return {
      key: req.key,
      fingerprint,
      request: req.request,
      name: run.name,
      dagRunId: run.dagRunId,
      createdAtMs: this.deps.clock.now().getTime(),
    };
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

const pendingConflict = (req: KeyedRequest, request: string): AppError =>
  new AppError(
    ErrorCode.AlreadyExists,
    `Idempotency-Key "${req.key}" is in use by another request (${request} with a different body) that is still creating its run: use a new key for a new run`,
    { idempotencyKey: req.key },
  );

const stillPending = (req: KeyedRequest, waitedMs: number): AppError =>
  new AppError(
    ErrorCode.AlreadyRunning,
    `Idempotency-Key "${req.key}": an earlier request with this key is still creating its run (waited ${waitedMs / 1000} s, on this or another instance); send the same request again in a few seconds to get that run`,
    { idempotencyKey: req.key },
  );
