import { NodeStatus, nodeStatusLabel, type RunStatus } from '@trellis/core';
import type { NodeRecord } from '@trellis/spec';
import type { RunContext } from './run-context.js';
import { evaluateRunStatus } from './run-status.js';

/** Sets a node's status, saves the record and tells the listeners. */
export const setNodeStatus = (ctx: RunContext, n: NodeRecord, status: NodeStatus): void => {
  n.status = status;
  ctx.saver.persist();
  ctx.deps.events?.safeEmit('node:statusChanged', ctx.record, n.step.name, status);
};

/** Ends a node with its final status and error, and tells the run hooks. */
export const finishNode = (
  ctx: RunContext,
  n: NodeRecord,
  status: NodeStatus,
  error: string,
): void => {
  n.error = error;
  // spec: Conventions: a step that never ran (cancelled or skipped before it started) has no times.
  n.finishedAt = n.startedAt === '' ? '' : ctx.now();
  delete n.pid;
  const what = status === NodeStatus.Skipped ? 'skipped' : `finished: ${nodeStatusLabel[status]}`;
  ctx.log(`step "${n.step.name}" ${what}${error ? ` (${error})` : ''}`);
  setNodeStatus(ctx, n, status);
  ctx.hooks.nodeFinished(n, ctx.logsClosed.get(n));
};

/** Cancels every node that has not started. */
export const cancelRemaining = (ctx: RunContext, error: string): void => {
  for (const n of ctx.record.nodes)
    if (n.status === NodeStatus.NotStarted) finishNode(ctx, n, NodeStatus.Cancelled, error);
};

/** The run's status as its nodes and run-level facts make it now. */
export const finalStatus = (ctx: RunContext): RunStatus => {
  const p = ctx.progress;
  return evaluateRunStatus(
    ctx.record.nodes.map((n) => ({
      status: n.status,
      failedButContinued: p.failedButContinued.has(n.step.name),
    })),
    {
      cancelled: ctx.stop.stopping || p.preconditionFailed,
      runError: ctx.stop.timedOut || p.handlerFailed || p.runError !== '',
    },
  );
};
