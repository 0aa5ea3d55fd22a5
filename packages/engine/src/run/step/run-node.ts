import { NodeStatus } from '@trellis/core';
import type { NodeRecord } from '@trellis/spec';
import { evaluateConditions } from '../../conditions/evaluate-conditions.js';
import type { StepLogs } from '../../ports/recorder.js';
import { isDone } from '../node-state.js';
import { conditionEnv, nodeScope, type NodeScope, type Scope } from './node-scope.js';
import { finishNode, setNodeStatus } from '../record-keeping.js';
import type { RunContext } from '../run-context.js';
import { executeWithPolicies } from './step-policies.js';

/**
 * Evaluates the step's preconditions (not in a dry run) and records their results in the node's
 * step; when one is not met, the node is skipped and `false` returned.
 */
const preconditionsMet = async (
  ctx: RunContext,
  n: NodeRecord,
  scope: NodeScope,
): Promise<boolean> => {
  if (n.step.preconditions.length === 0 || ctx.input.dryRun) return true;
  const { met, results } = await evaluateConditions(
    n.step.preconditions,
    conditionEnv(ctx, scope, n.step.shell),
  );
  n.step = {
    ...n.step,
    preconditions: results.map((c) => ({
      condition: c.condition,
      expected: c.expected,
      error: c.error,
    })),
  };
  if (met) return true;
  ctx.progress.continues.set(n.step.name, n.step.continueOn.skipped);
  const errors = results.filter((c) => c.error).map((c) => c.error);
  ctx.log(`step "${n.step.name}": ${errors.join('; ')}`);
  finishNode(ctx, n, NodeStatus.Skipped, '');
  return false;
};

/**
 * Step logs whose `close` runs once: a step that ends by its verdict closes them first (a write
 * failure then fails it, see step-policies.ts), and the same promise answers the later closes.
 */
const closingOnce = (logs: StepLogs): StepLogs => {
  let closing: Promise<void> | undefined;
  return { ...logs, close: () => (closing ??= logs.close()) };
};

/**
 * The log files of a node that ended otherwise (cancelled, skipped) are closed without holding up
 * the next step; the run waits for all of them before it saves its final status. A failure the
 * verdict already reported is not logged again.
 */
const closeLater = (ctx: RunContext, n: NodeRecord, logs: StepLogs, closed: () => void): void => {
  ctx.closing.push(
    logs
      .close()
      .catch((e: unknown) => {
        if (!n.error.includes((e as Error).message))
          ctx.log(`could not close the logs of step "${n.step.name}": ${(e as Error).message}`);
      })
      .finally(closed),
  );
};

/**
 * Runs one node (a step, or a handler with `isHandler`) to its final status; `extra` are variables
 * it sees in addition (DAG_RUN_STATUS for handlers).
 */
export const runNode = async (
  ctx: RunContext,
  n: NodeRecord,
  isHandler: boolean,
  extra: Scope = {},
): Promise<void> => {
  // A retried run keeps the nodes that already succeeded.
  if (isDone(n.status)) return;
  n.startedAt = ctx.now();
  n.finishedAt = '';
  n.error = '';
  const logs = closingOnce(await ctx.deps.recorder.openStepLogs(n.step.name));
  // The node's hooks hear of its end once its logs are complete on disk (mailOnError attaches them).
  let closed: () => void = () => undefined;
  ctx.logsClosed.set(n, new Promise<void>((resolve) => (closed = resolve)));
  n.stdout = logs.stdoutPath;
  n.stderr = logs.stderrPath;
  ctx.log(`step "${n.step.name}" started`);
  setNodeStatus(ctx, n, NodeStatus.Running);
  try {
    const scope = await nodeScope(ctx, n, logs, { ...ctx.hooks.envFor(n), ...extra });
    if (await preconditionsMet(ctx, n, scope))
      await executeWithPolicies(ctx, n, scope, logs, isHandler);
  } finally {
    closeLater(ctx, n, logs, closed);
  }
};
