import { NodeStatus, RunStatus } from '@trellis/core';

/** A finished node as the run status needs it. */
export interface NodeOutcome {
  readonly status: NodeStatus;
  /** Failed, but its `continueOn` let dependents run (and it did not `markSuccess`). */
  readonly failedButContinued: boolean;
}

/** Run-level facts that override the node picture. */
export interface RunFacts {
  readonly cancelled: boolean;
  /** A timeout, a handler failure, or another run-level failure. */
  readonly runError: boolean;
}

/**
 * The final run status (as the peer does):
 * 1. cancelled, unless every node succeeded or was skipped -> Cancelled (3);
 * 2. partial success (6): no failed node lacks continue permission, at least one node succeeded
 *    (or partially succeeded), and at least one failed-and-continued or partially succeeded;
 * 3. any failure (a node failed, or a run-level error) -> Failed (2);
 * 4. otherwise Succeeded (4).
 */
export const evaluateRunStatus = (nodes: readonly NodeOutcome[], facts: RunFacts): RunStatus => {
  const allGood = nodes.every(
    (n) => n.status === NodeStatus.Succeeded || n.status === NodeStatus.Skipped,
  );
  if (facts.cancelled && !allGood) return RunStatus.Cancelled;
  const hardFailure = nodes.some(
    (n) =>
      (n.status === NodeStatus.Failed && !n.failedButContinued) ||
      n.status === NodeStatus.Cancelled,
  );
  const anySuccess = nodes.some(
    (n) => n.status === NodeStatus.Succeeded || n.status === NodeStatus.PartiallySucceeded,
  );
  const anyPartial = nodes.some(
    (n) => n.failedButContinued || n.status === NodeStatus.PartiallySucceeded,
  );
  if (!facts.runError && !hardFailure && anySuccess && anyPartial)
    return RunStatus.PartiallySucceeded;
  if (facts.runError || hardFailure || nodes.some((n) => n.status === NodeStatus.Failed))
    return RunStatus.Failed;
  return RunStatus.Succeeded;
};
