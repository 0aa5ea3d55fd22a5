import { describe, expect, it } from 'vitest';
import { WorkerRegistry } from './worker-registry.js';

const T0 = new Date('2026-01-02T03:04:05Z');
const after = (ms: number): Date => new Date(T0.getTime() + ms);
const hb = (
  id: string,
  labels: Record<string, string>,
  over: Partial<{ capacity: number; incarnation: string; accepting: boolean }> = {},
) => ({
  id,
  labels,
  capacity: over.capacity ?? 2,
  runningTasks: [],
  incarnation: over.incarnation ?? 'i1',
  accepting: over.accepting ?? true,
});

describe('worker registry', () => {
  it('reports a new worker as joined, a repeated heartbeat not', () => {
    const r = new WorkerRegistry();
    expect(r.heartbeat(hb('a', {}), T0).joined).toBe(true);
    expect(r.heartbeat(hb('a', {}), after(1_000)).joined).toBe(false);
  });

  it('reports a worker back from unhealthy, or restarted, as joined', () => {
    const r = new WorkerRegistry();
    r.heartbeat(hb('a', {}), T0);
    expect(r.heartbeat(hb('a', {}), after(16_000)).joined).toBe(true);
    expect(r.heartbeat(hb('a', {}, { incarnation: 'i2' }), after(17_000)).joined).toBe(true);
  });

  it('lists workers with health computed from heartbeat age', () => {
    const r = new WorkerRegistry();
    r.heartbeat(hb('b', { gpu: 'true' }), T0);
    r.heartbeat(hb('a', {}), after(10_000));
    const list = r.list(after(12_000));
    expect(list.map((w) => [w.id, w.health])).toEqual([
      ['a', 'healthy'],
      ['b', 'warning'],
    ]);
  });

  it('offers only healthy, accepting, matching workers', () => {
    const r = new WorkerRegistry();
    r.heartbeat(hb('gpu', { gpu: 'true' }), T0);
    r.heartbeat(hb('cpu', { gpu: 'false' }), T0);
    r.heartbeat(hb('draining', { gpu: 'true' }, { accepting: false }), T0);
    expect(r.eligible({ gpu: 'true' }, after(1_000)).map((w) => w.id)).toEqual(['gpu']);
    expect(r.eligible({ gpu: 'true' }, after(6_000))).toEqual([]);
  });
});
