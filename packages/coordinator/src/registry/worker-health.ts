import { WorkerHealth } from '@trellis/contract';

/** Health of a worker, derived from the age of its last heartbeat (spec: Worker health). */
export { WorkerHealth };

/** Heartbeats younger than this are healthy (spec: under 5 seconds). */
export const HEALTHY_MS = 5_000;
/** Heartbeats older than this are unhealthy (spec: over 15 seconds). */
export const UNHEALTHY_MS = 15_000;

/**
 * A pure function of heartbeat age: under 5 s healthy, 5-15 s warning, over 15 s unhealthy. A
 * heartbeat from the future (clock skew) counts as fresh.
 */
export const healthOf = (lastHeartbeat: Date, now: Date): WorkerHealth => {
  const age = now.getTime() - lastHeartbeat.getTime();
  if (age < HEALTHY_MS) return WorkerHealth.Healthy;
  if (age <= UNHEALTHY_MS) return WorkerHealth.Warning;
  return WorkerHealth.Unhealthy;
};
