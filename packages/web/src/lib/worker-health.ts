import { WorkerHealth, workerHealthOfStatus } from '@trellis/contract';

const TONE: Readonly<Record<WorkerHealth, string>> = {
  [WorkerHealth.Healthy]: 'ok',
  [WorkerHealth.Warning]: 'partial',
  [WorkerHealth.Unhealthy]: 'failed',
};

/** `WORKER_HEALTH_STATUS_HEALTHY` -> tone and word (spec: Worker health). */
export const workerHealth = (s: string): { tone: string; text: string } => {
  const health = workerHealthOfStatus(s);
  return health ? { tone: TONE[health], text: health } : { tone: 'idle', text: s || 'unknown' };
};
