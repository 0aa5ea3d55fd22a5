/** `WORKER_HEALTH_STATUS_HEALTHY` -> tone and word (spec: Worker health). */
export const workerHealth = (s: string): { tone: string; text: string } =>
  s === 'WORKER_HEALTH_STATUS_HEALTHY'
    ? { tone: 'ok', text: 'healthy' }
    : s === 'WORKER_HEALTH_STATUS_WARNING'
      ? { tone: 'partial', text: 'warning' }
      : s === 'WORKER_HEALTH_STATUS_UNHEALTHY'
        ? { tone: 'failed', text: 'unhealthy' }
        : { tone: 'idle', text: s || 'unknown' };
