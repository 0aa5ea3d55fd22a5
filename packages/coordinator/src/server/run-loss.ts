import { AppError, ErrorCode, NodeStatus, RunStatus, isFinalRunStatus } from '@trellis/core';
import type { DagRunRecord, NodeRecord } from '@trellis/spec';
import type { CoordinatorContext } from './coordinator-context.js';
import { runKey, type RemoteRun } from './remote-runs.js';
import { toMsg } from './wire-refs.js';

/**
 * Takes a run from its worker (the lost-worker rule, and a run its worker's heartbeats stopped
 * listing): its late reports are refused from now on, its record is marked failed with `error`
 * unless it already ended, the worker is told to drop it, and its slot frees. The run is
 * forgotten only once its record is written: when the store fails, it stays tracked (and
 * refused) and the next sweep or heartbeat tries again, so it never shows running for ever.
 */
export const loseRun = async (
  ctx: CoordinatorContext,
  run: RemoteRun,
  workerId: string,
  error: string,
): Promise<void> => {
  const { deps } = ctx;
  ctx.dropped.add(workerId, runKey(run.ref, run.root));
  let record: DagRunRecord;
  try {
    record = await deps.store.getRun(run.ref, { root: run.root });
  } catch (e) {
    if (!(AppError.is(e) && e.code === ErrorCode.NotFound)) throw e;
    ctx.runs.remove(run.ref, run.root); // deleted meanwhile: nothing to mark
    ctx.capacity.changed();
    return;
  }
  if (!isFinalRunStatus(record.status)) {
    failRun(record, error, deps.clock.now().toISOString());
    await deps.store.saveRun(record);
    ctx.commands.push(workerId, { kind: 'KIND_DROP', run: toMsg(run.ref) });
    deps.onRunUpdate?.(record);
  }
  ctx.runs.remove(run.ref, run.root);
  ctx.capacity.changed();
};

/** Marks the run and its running nodes (handlers included) failed with `error` at `iso`. */
const failRun = (record: DagRunRecord, error: string, iso: string): void => {
  const failNode = (n: NodeRecord | undefined): void => {
    if (!n) return;
    if (n.status === NodeStatus.Running) {
      n.status = NodeStatus.Failed;
      n.finishedAt = iso;
      n.error = error;
    }
  };
  for (const n of record.nodes) failNode(n);
  failNode(record.onExit);
  failNode(record.onSuccess);
  failNode(record.onFailure);
  failNode(record.onCancel);
  record.status = RunStatus.Failed;
  record.error = error;
  record.finishedAt = iso;
  record.revision += 1_000; // above anything the worker may still send
};
