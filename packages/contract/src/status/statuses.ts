/*
 * Run and node statuses with the labels the API sends in `statusLabel`. Defined in core (the
 * engine and the store use them); taken from its Node-free `@trellis/core/status` entry so the
 * web UI's bundle gets them without core's config loader.
 */
export {
  RunStatus,
  runStatusLabel,
  isFinalRunStatus,
  isRunStatus,
  NodeStatus,
  nodeStatusLabel,
  isFinalNodeStatus,
  isSettableNodeStatus,
} from '@trellis/core/status';
