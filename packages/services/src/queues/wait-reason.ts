import { RunStatus } from '@trellis/core';
import type { Dag, DagRunRecord } from '@trellis/spec';
import type { DagRunSummary as RunSummaryRecord } from '../dags/dag-catalog-port.js';
import type { RunSnapshotData } from '../runs/run-store-port.js';
import { queueOf, type CustomQueue } from './queue-of.js';

/** Why a queued run waits (docs/api.md, "Why a run waits"). */
export const WaitKind = {
  /** Its queue is full, or runs queued before it go first. */
  Queue: 'queue',
  /** Its DAG has a workerSelector and no live worker carries those labels. */
  NoWorker: 'no-worker',
  /** Its DAG runs one run at a time (maxActiveRuns: 1, its own queue) and one is active. */
  Singleton: 'singleton',
} as const;
export type WaitKind = (typeof WaitKind)[keyof typeof WaitKind];

/** A live worker as the wait reason names it. */
export interface LiveWorker {
  readonly id: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** The reason in words and data. */
export interface WaitReason {
  readonly kind: WaitKind;
  /** One sentence an operator can act on. */
  readonly message: string;
  readonly queue: string;
  /** 1-based place among the queue's waiting runs, oldest first. */
  readonly position: number;
  /** Runs the queue lets be active at once; null for no limit. */
  readonly capacity: number | null;
  /** Runs of the queue active now (running, or handed to a worker). */
  readonly occupancy: number;
  /** The DAG's workerSelector, when it has one. */
  readonly selector?: Readonly<Record<string, string>>;
  /** The labels of each live worker, when the run waits for one (kind `no-worker`). */
  readonly liveWorkerLabels?: readonly Readonly<Record<string, string>>[];
  /** The DAG is suspended (its schedule starts no runs; queued runs still start in their turn). */
  readonly dagSuspended: boolean;
}

/** What the explanation reads. */
export interface WaitReasonDeps {
  listRuns(filter: { readonly status: RunStatus }): Promise<RunSummaryRecord[]>;
  getSnapshot(ref: { name: string; dagRunId: string }): Promise<RunSnapshotData>;
  readonly queues: readonly CustomQueue[];
}

/** What the caller knows beside the store. */
export interface WaitContext {
  /** Live (healthy) workers; undefined where no coordinator runs (runs execute here). */
  readonly liveWorkers?: readonly LiveWorker[] | undefined;
  readonly dagSuspended: boolean;
}

const matches = (labels: Readonly<Record<string, string>>, sel: Readonly<Record<string, string>>) =>
  Object.entries(sel).every(([k, v]) => labels[k] === v);

export const selectorText = (sel: Readonly<Record<string, string>>): string =>
  Object.entries(sel)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/**
 * Why the queued run `run` waits, or undefined for a run that is not queued. In order: no live
 * worker matches its DAG's workerSelector; its DAG runs one at a time and a run of it is active;
 * else its queue (its place, the queue's capacity and how many of its runs are active).
 */
export const explainWait = async (
  deps: WaitReasonDeps,
  run: DagRunRecord,
  ctx: WaitContext,
): Promise<WaitReason | undefined> => {
  if (run.status !== RunStatus.Queued) return undefined;
  const dag = (await deps.getSnapshot(run)).dag as Dag;
  const q = queueOf(dag, new Map(deps.queues.map((c) => [c.name, c])), run.queue || undefined);
  const [running, queued] = await Promise.all([
    deps.listRuns({ status: RunStatus.Running }),
    deps.listRuns({ status: RunStatus.Queued }),
  ]);
  const inQ = (r: RunSummaryRecord): boolean => (r.queue || r.name) === q.name;
  const active = running.filter(inQ);
  const waiting = queued.filter(inQ).reverse(); // the index lists newest first
  const position = Math.max(1, waiting.findIndex((r) => r.dagRunId === run.dagRunId) + 1);
  const selector = dag.workerSelector;
  const hasSelector = Object.keys(selector).length > 0;
  const base = {
    queue: q.name,
    position,
    capacity: q.capacity === Infinity ? null : q.capacity,
    occupancy: active.length,
    ...(hasSelector ? { selector: { ...selector } } : {}),
    dagSuspended: ctx.dagSuspended,
  };
  const note = ctx.dagSuspended
    ? ' The DAG is suspended: its schedule starts no runs, but queued runs still start in their turn.'
    : '';
  const live = ctx.liveWorkers;
  if (hasSelector && live !== undefined && !live.some((w) => matches(w.labels, selector))) {
    const labels = live.map((w) => ({ ...w.labels }));
    const seen =
      live.length === 0
        ? 'no worker is live'
        : `live workers have labels ${live.map((w) => `${w.id} {${selectorText(w.labels)}}`).join(', ')}`;
    return {
      kind: WaitKind.NoWorker,
      message: `no live worker matches workerSelector ${selectorText(selector)} (${seen}): start a worker with these labels (--labels ${selectorText(selector)}) or change the DAG's workerSelector; the run waits until then.${note}`,
      ...base,
      liveWorkerLabels: labels,
    };
  }
  const slots =
    base.capacity === null ? 'no limit' : `${active.length} of ${base.capacity} slots busy`;
  if (q.type === 'dag-based' && q.capacity === 1 && active.some((r) => r.name === dag.name)) {
    const ids = active.map((r) => r.dagRunId).join(', ');
    return {
      kind: WaitKind.Singleton,
      message: `DAG "${dag.name}" runs one run at a time (maxActiveRuns: 1) and run ${ids} is active: this run starts when it ends (position ${position} of ${waiting.length}).${note}`,
      ...base,
    };
  }
  return {
    kind: WaitKind.Queue,
    message: `position ${position} of ${waiting.length} in queue "${q.name}" (${slots}): ${position === 1 && (base.capacity === null || active.length < base.capacity) ? "next to start, at the queue's next pass" : 'it starts when a slot frees and the runs before it have started'}.${note}`,
    ...base,
  };
};

/**
 * Queued top-level runs whose DAG has a workerSelector that no live worker matches (the
 * `svc_runs_waiting_for_worker` gauge).
 */
export const countWaitingForWorker = async (
  deps: Omit<WaitReasonDeps, 'queues'>,
  live: readonly LiveWorker[],
): Promise<number> => {
  let n = 0;
  for (const r of await deps.listRuns({ status: RunStatus.Queued })) {
    const dag = (await deps.getSnapshot(r).catch(() => undefined))?.dag as Dag | undefined;
    const sel = dag?.workerSelector ?? {};
    if (Object.keys(sel).length > 0 && !live.some((w) => matches(w.labels, sel))) n++;
  }
  return n;
};
