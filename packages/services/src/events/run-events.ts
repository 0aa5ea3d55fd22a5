/**
 * The outbound event bus (docs/decisions.md, "Outbound events"): run, step, queue and worker
 * transitions, each with a monotonically increasing id, kept in a bounded ring so a client can
 * resume after a disconnect. The API's long-poll and Server-Sent Events read it; the web UI,
 * metrics and webhooks can subscribe the same way.
 */

import type { RunEventType } from '@trellis/core';

export { RUN_EVENT_NOUNS, RUN_EVENT_TYPES, type RunEventType } from '@trellis/core';

/** An event as published: what happened to which run (worker events name no run). */
export interface RunEventInput {
  readonly type: RunEventType;
  /** The DAG name of the run. */
  readonly dag?: string;
  readonly dagRunId?: string;
  /** The root run's id, for a child run. */
  readonly rootDagRunId?: string;
  /** What changed (statuses, step name, queue, worker id), as plain JSON data. */
  readonly data: Readonly<Record<string, unknown>>;
}

/** An event as delivered: with its id (1, 2, ... in publishing order) and time (ISO 8601). */
export interface RunEvent extends RunEventInput {
  readonly id: number;
  readonly time: string;
}

/** Which events a subscriber gets; absent fields do not filter. */
export interface RunEventFilter {
  readonly dag?: string;
  readonly dagRunId?: string;
  /** Event types or nouns (`run`, `step:finished`); any one matching lets an event through. */
  readonly types?: readonly string[];
}

/** What `subscribe` answers: the replayed events, whether some were lost, and the way out. */
export interface RunEventSubscription {
  /** Events after `after` still kept, oldest first (empty without `after`). */
  readonly replay: readonly RunEvent[];
  /**
   * True when events after `after` are no longer kept (the ring moved past them, or the id is
   * from before this process started): the replay starts at the oldest kept event.
   */
  readonly gap: boolean;
  unsubscribe(): void;
}

/** The bus: publish from where transitions happen, subscribe from where they are served. */
export interface RunEvents {
  publish(event: RunEventInput): RunEvent;
  /**
   * Calls `listener` with every later matching event, synchronously in publishing order; with
   * `after` (a Last-Event-ID), first replays the kept matching events after it.
   */
  subscribe(
    filter: RunEventFilter,
    listener: (event: RunEvent) => void,
    opts?: { readonly after?: number },
  ): RunEventSubscription;
  /** The id of the last event published (0 before the first). */
  readonly lastId: number;
}

/** True when `e` passes `f`. */
export const matchesFilter = (e: RunEvent, f: RunEventFilter): boolean => {
  if (f.dag !== undefined && e.dag !== f.dag) return false;
  if (f.dagRunId !== undefined && e.dagRunId !== f.dagRunId && e.rootDagRunId !== f.dagRunId)
    return false;
  if (f.types === undefined || f.types.length === 0) return true;
  const noun = e.type.slice(0, e.type.indexOf(':'));
  return f.types.some((t) => t === e.type || t === noun);
};
