import type { Clock } from '@trellis/core';
import type { RunEvent, RunEventSubscription, RunEvents } from '../events/run-events.js';
import { matchesFilter } from '../events/run-events.js';
import { ConcurrencyLimit } from './concurrency-limit.js';
import { attemptDelivery, type AttemptDeps } from './webhook-attempt.js';
import type { WebhookRetryPolicy } from './webhook-backoff.js';
import type {
  WebhookDelivery,
  WebhookDeliveryState,
  WebhookJournal,
  WebhookSubscription,
  WebhookTransport,
} from './webhook-port.js';

/** What {@link WebhookDeliveries} is built from (one per server process). */
export interface WebhookDeliveriesDeps {
  readonly subscriptions: readonly WebhookSubscription[];
  readonly journal: WebhookJournal;
  readonly transport: WebhookTransport;
  readonly events: RunEvents;
  readonly clock: Clock;
  readonly policy: WebhookRetryPolicy;
  /** How long one request may take, in ms. */
  readonly timeoutMs: number;
  /** At most this many deliveries are kept (pending and finished); finished ones go first. */
  readonly maxJournalEntries: number;
  /** A new unique event id (a UUID). */
  readonly ids: () => string;
  /** Warnings: a delivery given up or dropped, a journal write that failed. */
  readonly warn: (line: string) => void;
  /** In [0, 1), for the ±10% spread of the back-off. @default Math.random */
  readonly random?: () => number;
  /** Called with each delivery once it is journaled (created, after an attempt). */
  readonly onSaved?: (delivery: WebhookDelivery) => void;
}

/** Which deliveries the log shows (absent fields do not filter). */
export interface WebhookDeliveryQuery {
  readonly subscription?: string;
  readonly state?: WebhookDeliveryState;
  readonly dagRunId?: string;
  /** At most this many, newest first. */
  readonly limit: number;
}

/**
 * Completion callbacks (docs/decisions.md, "Webhooks"): every event on the bus that a
 * subscription asks for becomes a delivery, journaled before its first attempt and after every
 * attempt, POSTed signed, and retried with exponential back-off until a 2xx answer or the end of
 * the retry window. At least once: an attempt cut short by a stop or a crash is made again after
 * the restart, with the same event id. Requests to one subscription are limited to its
 * `maxConcurrency`; the journal to `maxJournalEntries`.
 */
export class WebhookDeliveries {
  readonly #deps: WebhookDeliveriesDeps;
  readonly #subs: ReadonlyMap<string, WebhookSubscription>;
  readonly #limits = new Map<string, ConcurrencyLimit>();
  /** Every kept delivery, oldest first (Map order is insertion order). */
  readonly #deliveries = new Map<string, WebhookDelivery>();
  readonly #stop = new AbortController();
  readonly #loops = new Set<Promise<void>>();
  readonly #attempt: AttemptDeps;
  #subscription: RunEventSubscription | undefined;

  constructor(deps: WebhookDeliveriesDeps) {
    this.#deps = deps;
    this.#subs = new Map(deps.subscriptions.map((s) => [s.name, s]));
    for (const s of deps.subscriptions)
      this.#limits.set(s.name, new ConcurrencyLimit(s.maxConcurrency));
    this.#attempt = {
      transport: deps.transport,
      policy: deps.policy,
      timeoutMs: deps.timeoutMs,
      nowMs: () => deps.clock.now().getTime(),
      random: deps.random ?? Math.random,
    };
  }

  /** Reads the journal, resumes its pending deliveries, then listens for new events. */
  async start(): Promise<void> {
    const stored = await this.#deps.journal.loadAll();
    stored.sort((a, b) => a.createdAtMs - b.createdAtMs);
    for (const d of stored) {
      if (d.state === 'pending' && !this.#subs.has(d.subscription)) {
        this.#deps.warn(
          `webhook delivery ${d.id} (${d.eventType}) failed: subscription "${d.subscription}" is no longer configured`,
        );
        const { nextAttemptAtMs: _, ...rest } = d;
        this.#deliveries.set(d.id, { ...rest, state: 'failed' });
        this.#save(this.#deliveries.get(d.id) ?? d);
        continue;
      }
      this.#deliveries.set(d.id, d);
      if (d.state === 'pending') this.#run(d.id, false);
    }
    if (this.#subs.size > 0)
      this.#subscription = this.#deps.events.subscribe({}, (e) => this.#on(e));
  }

  /** Stops listening and attempting; an attempt in flight is cut short and made after a restart. */
  async stop(): Promise<void> {
    this.#subscription?.unsubscribe();
    this.#stop.abort(new Error('webhook deliveries stopped'));
    await Promise.allSettled([...this.#loops]);
  }

  /** The delivery log, newest first. */
  list(q: WebhookDeliveryQuery): WebhookDelivery[] {
    const out: WebhookDelivery[] = [];
    const all = [...this.#deliveries.values()];
    for (let i = all.length - 1; i >= 0 && out.length < q.limit; i--) {
      const d = all[i] as WebhookDelivery;
      if (q.subscription !== undefined && d.subscription !== q.subscription) continue;
      if (q.state !== undefined && d.state !== q.state) continue;
      if (q.dagRunId !== undefined && d.dagRunId !== q.dagRunId) continue;
      out.push(d);
    }
    return out;
  }

  /** The configured subscriptions' names (the log's `subscription` filter is checked against them). */
  get subscriptionNames(): readonly string[] {
    return [...this.#subs.keys()];
  }

  #on(e: RunEvent): void {
    for (const s of this.#subs.values()) {
      if (!matchesFilter(e, { types: s.events })) continue;
      if (s.dags.length > 0 && (e.dag === undefined || !s.dags.includes(e.dag))) continue;
      const id = this.#deps.ids();
      const { id: _streamId, ...event } = e;
      const d: WebhookDelivery = {
        id,
        subscription: s.name,
        eventType: e.type,
        ...(e.dag !== undefined ? { dag: e.dag } : {}),
        ...(e.dagRunId !== undefined ? { dagRunId: e.dagRunId } : {}),
        body: JSON.stringify({ id, subscription: s.name, ...event }),
        createdAtMs: Date.parse(e.time),
        state: 'pending',
        attempts: [],
        nextAttemptAtMs: Date.parse(e.time),
      };
      this.#makeRoom();
      this.#deliveries.set(id, d);
      this.#run(id, true);
    }
  }

  /** Under the cap, one more fits: drops the oldest finished delivery, else the oldest pending. */
  #makeRoom(): void {
    while (this.#deliveries.size >= this.#deps.maxJournalEntries) {
      let victim: WebhookDelivery | undefined;
      for (const d of this.#deliveries.values())
        if (d.state !== 'pending') {
          victim = d;
          break;
        }
      if (!victim) {
        const oldest = this.#deliveries.values().next();
        if (oldest.done === true) return;
        victim = oldest.value;
        this.#deps.warn(
          `webhook journal full (${this.#deps.maxJournalEntries} deliveries, all pending): dropped delivery ${victim.id} (${victim.eventType} of run ${victim.dagRunId ?? '-'}) to "${victim.subscription}"; raise webhooks.maxJournalEntries or fix the receiver`,
        );
      }
      this.#deliveries.delete(victim.id);
      const id = victim.id;
      this.#deps.journal
        .remove(id)
        .catch((e: unknown) =>
          this.#deps.warn(`webhook journal: removing ${id} failed: ${(e as Error).message}`),
        );
    }
  }

  #run(id: string, saveFirst: boolean): void {
    const loop = this.#loop(id, saveFirst)
      .catch((e: unknown) => {
        if (!this.#stop.signal.aborted)
          this.#deps.warn(`webhook delivery ${id} stopped: ${(e as Error).message}`);
      })
      .finally(() => this.#loops.delete(loop));
    this.#loops.add(loop);
  }

  async #loop(id: string, saveFirst: boolean): Promise<void> {
    const signal = this.#stop.signal;
    let d = this.#deliveries.get(id);
    if (d && saveFirst) await this.#saved(d);
    while (d?.state === 'pending') {
      const sub = this.#subs.get(d.subscription);
      const limit = this.#limits.get(d.subscription);
      if (!sub || !limit) return;
      const wait = (d.nextAttemptAtMs ?? 0) - this.#attempt.nowMs();
      if (wait > 0) await this.#deps.clock.sleep(wait, signal);
      await limit.acquire(signal);
      let next: WebhookDelivery;
      try {
        next = await attemptDelivery(d, sub, this.#attempt, signal);
      } finally {
        limit.release();
      }
      if (!this.#deliveries.has(id)) return; // dropped from a full journal meanwhile
      this.#deliveries.set(id, next);
      if (next.state === 'failed')
        this.#deps.warn(
          `webhook delivery ${id} (${next.eventType}) to "${next.subscription}" failed after ${next.attempts.length} attempts: ${next.attempts.at(-1)?.error ?? ''}`,
        );
      await this.#saved(next);
      d = next;
    }
  }

  async #saved(d: WebhookDelivery): Promise<void> {
    await this.#deps.journal.save(d);
    this.#deps.onSaved?.(d);
  }

  #save(d: WebhookDelivery): void {
    this.#deps.journal
      .save(d)
      .catch((e: unknown) =>
        this.#deps.warn(`webhook journal: saving ${d.id} failed: ${(e as Error).message}`),
      );
  }
}
