import { WorkerHealth, type ApiWaitReason, type WorkerInfo } from '@trellis/contract';
import type { LiveWorker, StartedRun, WaitReason } from '@trellis/services';
import type { Dag, DagRunRecord } from '@trellis/spec';
import type { HttpDeps } from '../http/deps.js';

/** The live workers of a registry list: the healthy ones (those the coordinator hands runs to). */
export const toLiveWorkers = (workers: readonly WorkerInfo[]): LiveWorker[] =>
  workers
    .filter((w) => w.health === WorkerHealth.Healthy)
    .map((w) => ({ id: w.id, labels: w.labels }));

/** Live workers; undefined without a coordinator (runs execute in this process). */
const liveWorkersOf = (deps: HttpDeps): LiveWorker[] | undefined =>
  deps.workers ? toLiveWorkers(deps.workers()) : undefined;

const toApiWaitReason = ({ selector, liveWorkerLabels, ...rest }: WaitReason): ApiWaitReason => ({
  ...rest,
  ...(selector ? { selector: { ...selector } } : {}),
  ...(liveWorkerLabels ? { liveWorkerLabels: liveWorkerLabels.map((l) => ({ ...l })) } : {}),
});

/** `{waitReason}` for a queued run, `{}` for any other (docs/api.md, "Why a run waits"). */
export const waitReasonOf = async (
  deps: HttpDeps,
  run: DagRunRecord,
  fileName = run.name,
): Promise<{ waitReason?: ApiWaitReason }> => {
  try {
    const reason = await deps.reads.whyWaiting(run, {
      queues: deps.queueConfig ?? [],
      liveWorkers: liveWorkersOf(deps),
      dagSuspended: isSuspended(deps, fileName),
    });
    return reason ? { waitReason: toApiWaitReason(reason) } : {};
  } catch (e) {
    // The reason is an extra: the run's details (or its start) are answered without it.
    deps.log.error(`why run ${run.dagRunId} of DAG "${run.name}" waits could not be read`, e);
    return {};
  }
};

const isSuspended = (deps: HttpDeps, fileName: string): boolean => {
  try {
    return deps.dags.isSuspended(fileName);
  } catch {
    return false; // a run of an inline spec has no DAG file
  }
};

/**
 * A start or enqueue whose DAG has a workerSelector no live worker matches: the run is queued
 * (spec: workerSelector, "with no matching worker the task waits") and the answer says why.
 */
export const noWorkerReasonOf = async (
  deps: HttpDeps,
  dag: Dag,
  started: StartedRun,
): Promise<{ waitReason?: ApiWaitReason }> => {
  const selector = Object.entries(dag.workerSelector);
  const live = liveWorkersOf(deps);
  if (!started.queued || selector.length === 0 || live === undefined) return {};
  if (live.some((w) => selector.every(([k, v]) => w.labels[k] === v))) return {};
  return waitReasonOf(deps, started.record);
};
