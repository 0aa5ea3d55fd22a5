import { describe, expect, it } from 'vitest';
import type { Clock } from '@trellis/core';
import { InMemoryRunEvents } from './in-memory-run-events.js';
import type { RunEvent } from './run-events.js';

const clock: Clock = {
  now: () => new Date('2026-01-02T03:04:05.000Z'),
  sleep: () => Promise.reject(new Error('no sleeping here')),
};

describe('InMemoryRunEvents', () => {
  it('numbers events in order and delivers them to matching subscribers only', () => {
    const bus = new InMemoryRunEvents({ clock });
    const all: RunEvent[] = [];
    const ofRun: RunEvent[] = [];
    const steps: RunEvent[] = [];
    bus.subscribe({}, (e) => all.push(e));
    bus.subscribe({ dagRunId: 'r1' }, (e) => ofRun.push(e));
    bus.subscribe({ dag: 'a', types: ['step'] }, (e) => steps.push(e));
    bus.publish({ type: 'run:started', dag: 'a', dagRunId: 'r1', data: {} });
    bus.publish({ type: 'step:started', dag: 'a', dagRunId: 'r2', data: {} });
    bus.publish({ type: 'run:finished', dag: 'kid', dagRunId: 'c1', rootDagRunId: 'r1', data: {} });
    expect(all.map((e) => e.id)).toEqual([1, 2, 3]);
    expect(all[0]?.time).toBe('2026-01-02T03:04:05.000Z');
    expect(ofRun.map((e) => e.id)).toEqual([1, 3]); // a child run's event counts for its root
    expect(steps.map((e) => e.id)).toEqual([2]);
  });

  it('replays the kept events after an id, and says when some are gone', () => {
    const bus = new InMemoryRunEvents({ clock, retention: 3 });
    for (let i = 0; i < 5; i++) bus.publish({ type: 'worker:joined', data: { i } });
    const ok = bus.subscribe({}, () => undefined, { after: 3 });
    expect(ok.replay.map((e) => e.id)).toEqual([4, 5]);
    expect(ok.gap).toBe(false);
    const old = bus.subscribe({}, () => undefined, { after: 1 });
    expect(old.replay.map((e) => e.id)).toEqual([3, 4, 5]);
    expect(old.gap).toBe(true);
    const future = bus.subscribe({}, () => undefined, { after: 99 });
    expect(future.gap).toBe(true);
    expect(future.replay.map((e) => e.id)).toEqual([3, 4, 5]);
  });

  it('forgets a subscriber that unsubscribes, also during a delivery', () => {
    const bus = new InMemoryRunEvents({ clock });
    const got: number[] = [];
    const sub = bus.subscribe({ dagRunId: 'r' }, (e) => {
      got.push(e.id);
      sub.unsubscribe();
    });
    bus.publish({ type: 'run:started', dagRunId: 'r', data: {} });
    bus.publish({ type: 'run:finished', dagRunId: 'r', data: {} });
    expect(got).toEqual([1]);
    expect(bus.subscriberCount).toBe(0);
  });
});
