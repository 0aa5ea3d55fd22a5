export {
  CronScheduler,
  type CronSchedulerDeps,
  type LatestRun,
  type ScheduleActions,
  type ScheduledDag,
} from './cron-scheduler.js';
