import { RunStatus, runStatusLabel } from '@trellis/core';
import { handlerNodeName, type HandlerKind } from '@trellis/spec';
import { newNodeRecord } from './node-state.js';
import { finalStatus } from './record-keeping.js';
import type { RunContext } from './run-context.js';
import { runNode } from './step/run-node.js';

/** The handler a run status calls first: onSuccess (finished or partial success), onFailure, onCancel. */
export const firstHandlerKind = (status: RunStatus): HandlerKind | undefined => {
  switch (status) {
    case RunStatus.Succeeded:
    case RunStatus.PartiallySucceeded:
      return 'success';
    case RunStatus.Failed:
      return 'failure';
    case RunStatus.Cancelled:
      return 'cancel';
    default:
      return undefined;
  }
};

/**
 * Runs the handlers after the steps (spec: Events): the one for the run's status, then onExit.
 * Each sees the run's status at its start as DAG_RUN_STATUS.
 */
export const runHandlers = async (ctx: RunContext): Promise<void> => {
  const first = firstHandlerKind(finalStatus(ctx));
  ctx.stop.startHandlerPhase(ctx.input.stop);
  for (const kind of [first, 'exit' as const]) {
    if (!kind) continue;
    const step = ctx.dag.handlerOn[kind];
    if (!step) continue;
    const key = handlerNodeName[kind] as 'onSuccess' | 'onFailure' | 'onCancel' | 'onExit';
    const node = newNodeRecord(step);
    ctx.record[key] = node;
    const label = runStatusLabel[finalStatus(ctx)];
    await runNode(ctx, node, true, { DAG_RUN_STATUS: label });
  }
};
