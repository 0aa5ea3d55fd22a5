export { FsDagCatalog, type LoadedDag } from './dags/fs-dag-catalog.js';
export {
  RunService,
  type RunServiceDeps,
  type StartRequest,
  type StartedRun,
} from './runs/run-service.js';
export type { Trigger } from './admission/admission.js';
export type { CustomQueue } from './queues/queue-of.js';
export type {
  LocalDispatcherPort,
  LocalRun,
  RunActivation,
  RunDispatcher,
} from './runs/dispatcher-port.js';
export { recoverOrphans } from './runs/orphan-recovery.js';
export {
  WorkerChildRuns,
  type WorkerChildDeps,
  type WorkerChildStart,
} from './runs/worker-child-runs.js';
export { retryNodes } from './runs/retry-plan.js';
export {
  applyRetentionToAll,
  DEFAULT_HIST_RETENTION_DAYS,
  type RetentionDags,
  type RetentionReport,
  type RetentionStore,
} from './runs/retention-pass.js';
export type {
  ProcessProbe,
  RunSnapshotData,
  RunStorePort,
  StoreScope,
} from './runs/run-store-port.js';
export type {
  DagDefinitions,
  DagDetails,
  DagListEntry,
  DagListQuery,
  DagSearchResult,
  DagCatalog,
} from './dags/dag-catalog-port.js';
export type { DagRunSummary } from './dags/dag-catalog-port.js';
export {
  FsDagDefinitions,
  MINIMAL_DAG_SPEC,
  type FsDagDefinitionsDeps,
} from './dags/fs-dag-definitions.js';
