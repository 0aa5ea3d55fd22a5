export {
  CronScheduler,
  type CronSchedulerDeps,
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
