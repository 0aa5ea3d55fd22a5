export {
  CronScheduler,
  type CronSchedulerDeps,
  type Kind as ScheduleKind,
  type LatestRun,
  type ScheduleActions,
  type ScheduledDag,
} from './cron-scheduler.js';
export { RetentionOnStart, type RetentionOnStartStore } from './retention/retention-on-start.js';
export {
  runQueueProcessor,
  type QueueProcessorOptions,
  type QueueProcessorPort,
} from './queues/queue-processor.js';
export { fireKey, RESUME_MARK_KEY, type FireLedger } from './role/fire-ledger.js';
export {
  startSchedulerRole,
  type SchedulerLease,
  type SchedulerRoleDeps,
  type SchedulerStatus,
} from './role/scheduler-role.js';
export { scheduleActions, type ScheduledRunsPort } from './role/schedule-actions.js';
export { runRetentionLoop, type RetentionPassReport } from './role/retention-loop.js';
export {
  applyRetentionToAll,
  DEFAULT_HIST_RETENTION_DAYS,
  type RetentionDags,
  type RetentionReport,
  type RetentionStore,
} from './retention/retention-pass.js';
export { recoverLostRuns, type LostRunsDeps, type LostRunsProbe } from './recovery/lost-runs.js';
