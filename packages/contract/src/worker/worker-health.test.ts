import { describe, expect, it } from 'vitest';
import { WORKER_HEALTH_STATUS, WorkerHealth, workerHealthOfStatus } from './worker-health.js';
import { WorkerSchema } from './worker.schema.js';

describe('worker health on the wire', () => {
  it('names each health WORKER_HEALTH_STATUS_<HEALTH> and reads it back', () => {
    for (const h of Object.values(WorkerHealth)) {
      expect(WORKER_HEALTH_STATUS[h]).toBe(`WORKER_HEALTH_STATUS_${h.toUpperCase()}`);
      expect(workerHealthOfStatus(WORKER_HEALTH_STATUS[h])).toBe(h);
    }
  });

  it('reads nothing from a value the API does not send', () => {
    expect(workerHealthOfStatus('')).toBeUndefined();
    expect(workerHealthOfStatus('healthy')).toBeUndefined();
  });

  it('accepts exactly those values in the worker schema', () => {
    const worker = { id: 'w', labels: {}, last_heartbeat: '', running_tasks: [] };
    for (const s of Object.values(WORKER_HEALTH_STATUS))
      expect(WorkerSchema.safeParse({ ...worker, health_status: s }).success).toBe(true);
    expect(WorkerSchema.safeParse({ ...worker, health_status: 'healthy' }).success).toBe(false);
  });
});
