import {
  NodeStatus,
  RunStatus,
  isFinalNodeStatus,
  isFinalRunStatus,
  nodeStatusLabel,
  runStatusLabel,
} from '@trellis/core';
import type { DagRunRecord, NodeRecord } from '@trellis/spec';
import type { RunEventInput, RunEvents } from './run-events.js';

/** How many ended runs are remembered against a repeated final save. */
const ENDED_KEPT = 10_000;

type Publish = (type: RunEventInput['type'], data: Record<string, unknown>) => void;

interface Seen {
  status: RunStatus;
  readonly nodes: Map<string, NodeStatus>;
}

const nodesOf = (r: DagRunRecord): NodeRecord[] =>
  [...r.nodes, r.onExit, r.onSuccess, r.onFailure, r.onCancel].filter(
    (n): n is NodeRecord => n !== undefined,
  );

/**
 * Turns the stream of saved run records into events: the store calls `recordSaved` after every
 * record it writes (the one place every run status change passes through, local and remote
 * alike), and this compares with the last record it saw of that run. It remembers runs until
 * they end, so its memory is the runs not yet final.
 */
export class RecordTransitions {
  readonly #events: RunEvents;
  readonly #seen = new Map<string, Seen>();
  /**
   * The final status of runs that ended lately (the last {@link ENDED_KEPT}), so a final record
   * saved again (the store re-saves it as logs close) publishes no second `run:finished`.
   */
  readonly #ended = new Map<string, RunStatus>();

  constructor(events: RunEvents) {
    this.#events = events;
  }

  /** Publishes what changed between the last saved record of this run and `r`. */
  recordSaved(r: DagRunRecord): void {
    const key = `${r.root.dagRunId}/${r.name}/${r.dagRunId}`;
    const prev = this.#seen.get(key);
    if (!prev && this.#ended.get(key) === r.status) return; // the same end, saved again
    this.#ended.delete(key);
    const base = {
      dag: r.name,
      dagRunId: r.dagRunId,
      ...(r.root.dagRunId !== r.dagRunId ? { rootDagRunId: r.root.dagRunId } : {}),
    };
    const publish: Publish = (type, data) => {
      this.#events.publish({ ...base, type, data });
    };
    const seen: Seen = prev ?? { status: RunStatus.NotStarted, nodes: new Map() };
    const runChanged = !prev || prev.status !== r.status;
    const was = seen.status;
    seen.status = r.status;
    // a run's start comes before its steps' events, its end after them
    const final = isFinalRunStatus(r.status);
    if (runChanged && !final) this.#runChanged(r, was, prev, publish);
    this.#nodesChanged(r, seen, publish);
    if (runChanged && final) this.#runChanged(r, was, prev, publish);
    if (isFinalRunStatus(r.status)) {
      this.#seen.delete(key);
      this.#ended.set(key, r.status);
      if (this.#ended.size > ENDED_KEPT) this.#ended.delete(this.#ended.keys().next().value ?? '');
    } else if (!prev) this.#seen.set(key, seen);
  }

  #nodesChanged(r: DagRunRecord, seen: Seen, publish: Publish): void {
    for (const n of nodesOf(r)) {
      const was = seen.nodes.get(n.step.name) ?? NodeStatus.NotStarted;
      if (was === n.status) continue;
      seen.nodes.set(n.step.name, n.status);
      const data = {
        stepName: n.step.name,
        status: n.status,
        statusLabel: nodeStatusLabel[n.status],
      };
      if (n.status === NodeStatus.Running) publish('step:started', data);
      else if (isFinalNodeStatus(n.status)) publish('step:finished', data);
    }
  }

  #runChanged(r: DagRunRecord, was: RunStatus, prev: Seen | undefined, publish: Publish): void {
    const data = {
      status: r.status,
      statusLabel: runStatusLabel[r.status],
      ...(prev ? { previousStatus: was } : {}),
    };
    if (r.status === RunStatus.Queued) {
      publish('run:queued', data);
      publish('queue:entered', { queue: r.queue });
      return;
    }
    if (was === RunStatus.Queued) {
      publish('queue:left', {
        queue: r.queue,
        reason: r.status === RunStatus.Running ? 'started' : 'dequeued',
      });
    }
    if (r.status === RunStatus.Running) publish('run:started', data);
    else if (isFinalRunStatus(r.status))
      publish('run:finished', { ...data, ...(r.error ? { error: r.error } : {}) });
  }
}
