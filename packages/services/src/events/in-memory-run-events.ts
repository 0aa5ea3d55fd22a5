import type { Clock } from '@trellis/core';
import {
  matchesFilter,
  type RunEvent,
  type RunEventFilter,
  type RunEventInput,
  type RunEventSubscription,
  type RunEvents,
} from './run-events.js';

/** Events kept for resuming (docs/decisions.md, "Outbound events"). */
export const DEFAULT_EVENT_RETENTION = 10_000;

interface Subscriber {
  readonly filter: RunEventFilter;
  readonly listener: (event: RunEvent) => void;
}

/**
 * The event bus of one process: ids count from 1, the last `retention` events are kept in a
 * ring buffer. Subscribers with a `dagRunId` filter are indexed by it, so a publish costs the
 * subscribers of that run plus the unfiltered ones, never a scan of every waiting client.
 */
export class InMemoryRunEvents implements RunEvents {
  readonly #clock: Clock;
  readonly #ring: (RunEvent | undefined)[];
  #lastId = 0;
  /** Subscribers by the run id they filter on; `''` holds those with no run filter. */
  readonly #subs = new Map<string, Set<Subscriber>>();

  constructor(opts: { clock: Clock; retention?: number }) {
    const retention = opts.retention ?? DEFAULT_EVENT_RETENTION;
    if (!Number.isInteger(retention) || retention < 1)
      throw new Error(`event retention must be a positive integer, got ${retention}`);
    this.#clock = opts.clock;
    this.#ring = new Array<RunEvent | undefined>(retention);
  }

  get lastId(): number {
    return this.#lastId;
  }

  publish(input: RunEventInput): RunEvent {
    const event: RunEvent = { ...input, id: ++this.#lastId, time: this.#clock.now().toISOString() };
    this.#ring[event.id % this.#ring.length] = event;
    this.#deliver(this.#subs.get(''), event);
    if (event.dagRunId !== undefined) this.#deliver(this.#subs.get(event.dagRunId), event);
    if (event.rootDagRunId !== undefined && event.rootDagRunId !== event.dagRunId)
      this.#deliver(this.#subs.get(event.rootDagRunId), event);
    return event;
  }

  subscribe(
    filter: RunEventFilter,
    listener: (event: RunEvent) => void,
    opts: { readonly after?: number } = {},
  ): RunEventSubscription {
    const { replay, gap } =
      opts.after === undefined ? { replay: [], gap: false } : this.#since(opts.after, filter);
    const key = filter.dagRunId ?? '';
    const sub: Subscriber = { filter, listener };
    let set = this.#subs.get(key);
    if (!set) this.#subs.set(key, (set = new Set()));
    set.add(sub);
    return {
      replay,
      gap,
      unsubscribe: () => {
        set.delete(sub);
        if (set.size === 0 && this.#subs.get(key) === set) this.#subs.delete(key);
      },
    };
  }

  /** Subscribers right now (tests and benches check that waiters are freed). */
  get subscriberCount(): number {
    let n = 0;
    for (const s of this.#subs.values()) n += s.size;
    return n;
  }

  #since(after: number, filter: RunEventFilter): { replay: RunEvent[]; gap: boolean } {
    const oldest = Math.max(1, this.#lastId - this.#ring.length + 1);
    // an id from the future was handed out by an earlier process: everything kept is new to it
    const gap = after > this.#lastId || after < oldest - 1;
    const from = after > this.#lastId ? oldest : Math.max(after + 1, oldest);
    const replay: RunEvent[] = [];
    for (let id = from; id <= this.#lastId; id++) {
      const e = this.#ring[id % this.#ring.length];
      if (e && matchesFilter(e, filter)) replay.push(e);
    }
    return { replay, gap };
  }

  #deliver(set: Set<Subscriber> | undefined, event: RunEvent): void {
    if (!set) return;
    for (const s of [...set]) if (matchesFilter(event, s.filter)) s.listener(event);
  }
}
