import { describe, expect, it } from 'vitest';
import { AppError } from '@trellis/core';
import { FakeClock, parseExposition, sampleValue } from '@trellis/testkit';
import { createMetrics } from './create-metrics.js';

// `GET /metrics?name=a,b`: the named metrics only, each one's collect run and no other's.
describe('createMetrics render(names)', () => {
  const setup = () => {
    const calls: string[] = [];
    const metrics = createMetrics({
      version: '1.2.3',
      buildDate: '',
      clock: new FakeClock('2026-01-02T03:04:05.000Z'),
      startedAt: new Date('2026-01-02T03:00:00.000Z'),
      sources: {
        runningRuns: () => (calls.push('running'), 2),
        queuedRuns: () => (calls.push('queued'), Promise.resolve({ a: 1, b: 2 })),
        dagCount: () => (calls.push('dags'), 7),
        schedulerRunning: () => (calls.push('scheduler'), true),
      },
    });
    return { metrics, calls };
  };

  it('answers the named metrics only, reading only their sources', async () => {
    const { metrics, calls } = setup();
    const names = ['svc_scheduler_running', 'svc_dag_runs_currently_running'];
    const f = parseExposition((await metrics.render(names)).body);
    expect([...f.keys()]).toEqual(names);
    expect(sampleValue(f, 'svc_scheduler_running')).toBe(1);
    expect(sampleValue(f, 'svc_dag_runs_currently_running')).toBe(2);
    expect(calls.sort()).toEqual(['running', 'scheduler']);
    calls.length = 0;
    const q = parseExposition((await metrics.render(['svc_dag_runs_queued_total'])).body);
    expect(sampleValue(q, 'svc_dag_runs_queued_total')).toBe(3);
    expect(calls).toEqual(['queued']);
  });

  it('refuses an unknown name, naming it', async () => {
    const { metrics } = setup();
    const e = await metrics.render(['svc_info', 'svc_nope']).catch((x: unknown) => x);
    expect(AppError.is(e) && e.code).toBe('bad_request');
    expect((e as Error).message).toContain('svc_nope');
  });
});
