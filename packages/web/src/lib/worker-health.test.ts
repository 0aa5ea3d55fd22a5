import { describe, expect, it } from 'vitest';
import { workerHealth } from './worker-health';

describe('workerHealth', () => {
  it('colours the spec health statuses', () => {
    expect(workerHealth('WORKER_HEALTH_STATUS_HEALTHY')).toEqual({ tone: 'ok', text: 'healthy' });
    expect(workerHealth('WORKER_HEALTH_STATUS_WARNING')).toEqual({
      tone: 'partial',
      text: 'warning',
    });
    expect(workerHealth('WORKER_HEALTH_STATUS_UNHEALTHY')).toEqual({
      tone: 'failed',
      text: 'unhealthy',
    });
    expect(workerHealth('')).toEqual({ tone: 'idle', text: 'unknown' });
  });
});
