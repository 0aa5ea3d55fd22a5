export * from './ports/recorder.js';
export * from './ports/executor.js';
export * from './ports/command-runner.js';
export * from './ports/child-runner.js';
export * from './ports/run-hooks.js';
export * from './events.js';
export * from './vars/index.js';
export { runDag, type RunDagInput } from './run/dag-runner.js';
export type { EngineDeps } from './run/engine-deps.js';
export { newNodeRecord } from './run/node-state.js';
export { evaluateRunStatus } from './run/run-status.js';
export { backoffDelayMs } from './policies/backoff.js';
export { shouldRetry, retryDelayMs, resolveRetryPolicy } from './policies/retry-policy.js';
export {
  hostedRunKey,
  newRunRecord,
  resolveRunParams,
  type NewRunRecordInput,
  type RunParams,
} from './record/new-run-record.js';
