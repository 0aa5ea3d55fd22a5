import {
  NodeStatus,
  RunStatus,
  isFinalNodeStatus,
  isFinalRunStatus,
  nodeStatusLabel,
  runStatusLabel,
} from '@trellis/core';
import type { DagRunRecord, NodeRecord, RunRef } from '@trellis/spec';
import type { RunEventInput, RunEvents } from './run-events.js';
import type { FinalRecords } from './run-wait.js';

/** How many ended runs are remembered against a repeated final save. */
const ENDED_KEPT = 10_000;
/** How many ended runs' last saved records are kept whole, for the waiters they wake. */
const FINALS_KEPT = 64;

const keyOf = (root: string, name: string, dagRunId: string): string =>
  `${root}/${name}/${dagRunId}`;

type Publish = (type: RunEventInput['type'], data: Record<string, unknown>) => void;

interface Seen {
  status: RunStatus;
  readonly nodes: Map<string, NodeStatus>;
  /** The `startedAt` of the nodes the last save showed not started. */
  readonly waiting: Map<string, string>;
}

const nodesOf = (r: DagRunRecord): NodeRecord[] =>
  [...r.nodes, r.onExit, r.onSuccess, r.onFailure, r.onCancel].filter(
    (n): n is NodeRecord => n !== undefined,
  );

const RUNNING = nodeStatusLabel[NodeStatus.Running];

/**
 * True when node `n` ended having started in this run's attempt while no saved record showed it
 * running: saves of node states are coalesced (docs/decisions.md, "Per-step cost"), and a
 * worker's reports replaced before they left, so a short step may go from not started to its end
 * in one save. It still gets its `step:started`. A node an earlier save showed not started ran
 * when its `startedAt` changed since (no comparison of times: a worker's clock, which stamps the
 * node, may be behind the coordinator's, which stamped the run). Else (`waitingAt` undefined) a
 * node that ran in an earlier attempt (a retried run) started before the run did.
 */
const ranUnseen = (
  r: DagRunRecord,
  n: NodeRecord,
  was: NodeStatus,
  waitingAt: string | undefined,
): boolean =>
  was === NodeStatus.NotStarted &&
  n.startedAt !== '' &&
  (waitingAt === undefined ? n.startedAt >= r.startedAt : n.startedAt !== waitingAt);

/**
 * Turns the stream of saved run records into events: the store calls `recordSaved` after every
 * record it writes (the one place every run status change passes through, local and remote
 * alike), and this compares with the last record it saw of that run. It remembers runs until
 * they end, so its memory is the runs not yet final.
 */
export class RecordTransitions implements FinalRecords {
  readonly #events: RunEvents;
  /**
   * The last saved record of the runs that ended lately (the last {@link FINALS_KEPT}): a client
   * woken by a `run:finished` is answered from here instead of reading back what was just written.
   */
  readonly #finals = new Map<string, DagRunRecord>();
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
    const key = keyOf(r.root.dagRunId, r.name, r.dagRunId);
    this.#keepFinal(key, r);
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
    const seen: Seen = prev ?? {
      status: RunStatus.NotStarted,
      nodes: new Map(),
      waiting: new Map(),
    };
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

  /** The last record saved of the top-level run `ref` when it ended lately, else undefined. */
  lastFinal(ref: RunRef): DagRunRecord | undefined {
    return this.#finals.get(keyOf(ref.dagRunId, ref.name, ref.dagRunId));
  }

  /** Keeps `r` when final (the newest save wins), forgets the run's record when it is not. */
  #keepFinal(key: string, r: DagRunRecord): void {
    this.#finals.delete(key);
    if (!isFinalRunStatus(r.status)) return;
    this.#finals.set(key, r);
    if (this.#finals.size > FINALS_KEPT)
      this.#finals.delete(this.#finals.keys().next().value ?? '');
  }

  #nodesChanged(r: DagRunRecord, seen: Seen, publish: Publish): void {
    for (const n of nodesOf(r)) {
      const was = seen.nodes.get(n.step.name) ?? NodeStatus.NotStarted;
      if (was === n.status) {
        if (was === NodeStatus.NotStarted) seen.waiting.set(n.step.name, n.startedAt);
        continue;
      }
      seen.nodes.set(n.step.name, n.status);
      const waitingAt = seen.waiting.get(n.step.name);
      seen.waiting.delete(n.step.name);
      const data = {
        stepName: n.step.name,
        status: n.status,
        statusLabel: nodeStatusLabel[n.status],
      };
      if (n.status === NodeStatus.Running) publish('step:started', data);
      else if (isFinalNodeStatus(n.status)) {
        if (ranUnseen(r, n, was, waitingAt))
          publish('step:started', { ...data, status: NodeStatus.Running, statusLabel: RUNNING });
        publish('step:finished', data);
      }
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
