// the worker's side (client, address ring, selectors, wire messages) is exported once, in client.ts
export * from './client.js';
export { HEALTHY_MS, UNHEALTHY_MS, WorkerHealth, healthOf } from './registry/worker-health.js';
export {
  WorkerRegistry,
  type RunningTask,
  type WorkerEntry,
  type WorkerState,
  type WorkerView,
} from './registry/worker-registry.js';
export {
  Coordinator,
  type ComponentState,
  type CoordinatorDeps,
  type WorkerStateChange,
} from './server/coordinator.js';
export type { LogChunkSink, WorkerChange } from './server/coordinator-deps.js';
export type {
  FleetPort,
  FleetSnapshot,
  FleetWorker,
  RemoteWorker,
  StateRequest,
} from './fleet/fleet-port.js';
export { MemoryFleet } from './fleet/memory-fleet.js';
export type { ChildRunsPort, ChildStart } from './server/child-runs-port.js';
export type { CoordinatorStore, RootScope } from './server/coordinator-store.js';
export { isTlsEnabled } from './server/credentials.js';
export { makeCa, makeLeaf, type CertPair } from './auth/certs.js';
export { PROTOCOL_VERSION } from './wire/protocol.js';
