import { isFinalRunStatus, type Clock } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import type { RunReads } from '../runs/run-reads.js';
import type { RunEvents } from './run-events.js';

/** The records of runs that just ended, as saved (`RecordTransitions` keeps the last few). */
export interface FinalRecords {
  lastFinal(ref: RunRef): DagRunRecord | undefined;
}

/** What {@link waitForFinalRun} needs. */
export interface RunWaitDeps {
  readonly reads: RunReads;
  readonly events: RunEvents;
  readonly clock: Clock;
  /**
   * Where a waiter woken by the run's end finds the record just saved, instead of reading it
   * back from the store (a few ms on a busy machine). Absent or not there: read from the store.
   */
  readonly finals?: FinalRecords;
}

/**
 * The run `ref` once it is final, or as it is after `timeoutMs` (or when `signal` aborts: the
 * client went away). Event-driven: a waiter is one subscription on the bus, indexed by the run
 * id, woken by the run's `run:finished`; nothing polls. Throws as `RunReads.find` (not_found).
 */
export const waitForFinalRun = async (
  deps: RunWaitDeps,
  ref: RunRef,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<DagRunRecord> => {
  const first = await deps.reads.find(ref);
  if (isFinalRunStatus(first.status) || timeoutMs <= 0 || signal?.aborted) return first;
  const id = { name: first.name, dagRunId: first.dagRunId };
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  let ended = false;
  const sub = deps.events.subscribe(
    { dag: id.name, dagRunId: id.dagRunId, types: ['run:finished'] },
    (e) => {
      if (e.dagRunId !== id.dagRunId) return;
      ended = true;
      stop.abort();
    },
  );
  try {
    // subscribed first, then read again: an end between the two reads is not missed
    const now = await deps.reads.find(id);
    if (isFinalRunStatus(now.status)) return now;
    await deps.clock.sleep(timeoutMs, stop.signal).catch(() => undefined);
    const saved = ended ? deps.finals?.lastFinal(id) : undefined;
    return saved ?? (await deps.reads.find(id));
  } finally {
    sub.unsubscribe();
    signal?.removeEventListener('abort', onAbort);
    stop.abort(); // frees the timer of a wait that ended early
  }
};
