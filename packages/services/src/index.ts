export { FsDagCatalog, type LoadedDag } from './dags/fs-dag-catalog.js';
export {
  RunService,
  type RunServiceDeps,
  type StartRequest,
  type StartedRun,
} from './runs/run-service.js';
export { retryNodes } from './runs/retry-plan.js';
export type {
  ProcessProbe,
  RunSnapshotData,
  RunStorePort,
  StoreScope,
} from './runs/run-store-port.js';
