/**
 * Status of a node (one step's result in a run). Values 0-5 are the ones the step status update
 * accepts (spec: "Step statuses"); 6 is reached when a child DAG run ends in partial success.
 */
export const NodeStatus = {
  NotStarted: 0,
  Running: 1,
  Failed: 2,
  Cancelled: 3,
  Succeeded: 4,
  Skipped: 5,
  PartiallySucceeded: 6,
} as const;
export type NodeStatus = (typeof NodeStatus)[keyof typeof NodeStatus];

/** Labels as the API returns them in `statusLabel` (docs/decisions.md). */
export const nodeStatusLabel: Readonly<Record<NodeStatus, string>> = {
  0: 'not started',
  1: 'running',
  2: 'failed',
  3: 'cancelled',
  4: 'finished',
  5: 'skipped',
  6: 'partial success',
};

/** True for the statuses a node keeps once the run has moved past it. */
export const isFinalNodeStatus = (s: NodeStatus): boolean =>
  s === NodeStatus.Failed ||
  s === NodeStatus.Cancelled ||
  s === NodeStatus.Succeeded ||
  s === NodeStatus.Skipped ||
  s === NodeStatus.PartiallySucceeded;

/** True when `n` is a value the step status update accepts (spec: 0-5). */
export const isSettableNodeStatus = (n: unknown): n is NodeStatus =>
  typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 5;
