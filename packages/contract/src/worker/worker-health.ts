/** Health of a worker, derived from the age of its last heartbeat (spec: Worker health). */
export const WorkerHealth = {
  Healthy: 'healthy',
  Warning: 'warning',
  Unhealthy: 'unhealthy',
} as const;
export type WorkerHealth = (typeof WorkerHealth)[keyof typeof WorkerHealth];

/** A worker health as the API sends it in `health_status` (spec: Worker object). */
export const WORKER_HEALTH_STATUS = {
  healthy: 'WORKER_HEALTH_STATUS_HEALTHY',
  warning: 'WORKER_HEALTH_STATUS_WARNING',
  unhealthy: 'WORKER_HEALTH_STATUS_UNHEALTHY',
} as const satisfies Readonly<Record<WorkerHealth, string>>;
export type WorkerHealthStatus = (typeof WORKER_HEALTH_STATUS)[WorkerHealth];

/** The health a `health_status` names, `undefined` for a value the API does not send. */
export const workerHealthOfStatus = (status: string): WorkerHealth | undefined =>
  Object.values(WorkerHealth).find((h) => WORKER_HEALTH_STATUS[h] === status);
