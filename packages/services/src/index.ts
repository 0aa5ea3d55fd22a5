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
export {
  WorkerChildRuns,
  type WorkerChildDeps,
  type WorkerChildStart,
  type WorkerChildRunsPort,
} from './runs/worker-child-runs.js';
export { retryNodes } from './runs/retry-plan.js';
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
  LoadedDag,
} from './dags/dag-catalog-port.js';
export type { DagRunSummary } from './dags/dag-catalog-port.js';
export {
  RunReads,
  findNode,
  type LogChunkData,
  type LogFollowHandle,
  type LogWindowQuery,
  type RunListFilter,
  type RunReadStore,
  type RunSummaryRecord,
} from './runs/run-reads.js';
export type { RunOutputs, StepOutputs } from './runs/run-outputs.js';
export type {
  IdempotencyEntry,
  IdempotencyJournal,
  KeyClaim,
  KeyClaimRequest,
} from './idempotency/idempotency-journal-port.js';
export {
  IDEMPOTENCY_TTL_MS,
  IdempotentTriggers,
  fingerprintOf,
  type KeyedOutcome,
  type KeyedRequest,
  type RunPlan,
} from './idempotency/idempotent-triggers.js';
export {
  WaitKind,
  countWaitingForWorker,
  explainWait,
  selectorText,
  type LiveWorker,
  type WaitContext,
  type WaitReason,
} from './queues/wait-reason.js';
export { queueOccupancy, type QueueOccupancy } from './queues/queue-occupancy.js';
export {
  RUN_EVENT_NOUNS,
  RUN_EVENT_TYPES,
  matchesFilter,
  type RunEvent,
  type RunEventFilter,
  type RunEventInput,
  type RunEventSubscription,
  type RunEventType,
  type RunEvents,
} from './events/run-events.js';
export { DEFAULT_EVENT_RETENTION, InMemoryRunEvents } from './events/in-memory-run-events.js';
export { RecordTransitions } from './events/record-transitions.js';
export { waitForFinalRun, type FinalRecords, type RunWaitDeps } from './events/run-wait.js';
export {
  followStepLog,
  type StepLogFollowDeps,
  type StepLogSink,
} from './events/step-log-follow.js';
export { WebhookDeliveries } from './webhooks/webhook-deliveries.js';
export type { WebhookDelivery, WebhookJournal } from './webhooks/webhook-port.js';
export { WebhookHeader, verifyWebhookSignature } from './webhooks/webhook-signing.js';
export { fetchWebhookTransport } from './webhooks/fetch-webhook-transport.js';
