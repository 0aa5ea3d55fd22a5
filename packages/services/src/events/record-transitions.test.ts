import { describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus, type Clock } from '@trellis/core';
import type { DagRunRecord, NodeRecord } from '@trellis/spec';
import { InMemoryRunEvents } from './in-memory-run-events.js';
import { RecordTransitions } from './record-transitions.js';

const clock: Clock = { now: () => new Date(0), sleep: () => Promise.resolve() };

const node = (name: string, status: NodeStatus) => ({ step: { name }, status }) as NodeRecord;
const record = (status: RunStatus, nodes: NodeRecord[]) =>
  ({
    name: 'd',
    dagRunId: 'r',
    root: { name: 'd', dagRunId: 'r' },
    status,
    queue: 'd',
    error: '',
    nodes,
  }) as unknown as DagRunRecord;

describe('RecordTransitions', () => {
  it('publishes queue, run and step transitions; the run ends after its steps', () => {
    const bus = new InMemoryRunEvents({ clock });
    const types: string[] = [];
    bus.subscribe({}, (e) => types.push(e.type));
    const t = new RecordTransitions(bus);
    t.recordSaved(record(RunStatus.Queued, [node('a', NodeStatus.NotStarted)]));
    t.recordSaved(record(RunStatus.Running, [node('a', NodeStatus.Running)]));
    t.recordSaved(record(RunStatus.Running, [node('a', NodeStatus.Running)])); // no change
    t.recordSaved(record(RunStatus.Failed, [node('a', NodeStatus.Failed)]));
    expect(types).toEqual([
      'run:queued',
      'queue:entered',
      'queue:left',
      'run:started',
      'step:started',
      'step:finished',
      'run:finished',
    ]);
  });

  it('publishes step:started for a step whose running state no save showed (coalesced saves)', () => {
    const bus = new InMemoryRunEvents({ clock });
    const events: unknown[] = [];
    bus.subscribe({ types: ['step'] }, (e) => events.push([e.type, e.data['stepName']]));
    const t = new RecordTransitions(bus);
    const at = (n: NodeRecord, startedAt: string) => ({ ...n, startedAt });
    const started = { startedAt: '2026-01-01T00:00:01.000Z' };
    t.recordSaved({
      ...record(RunStatus.Running, [node('a', NodeStatus.NotStarted)]),
      ...started,
    });
    const ended = [
      at(node('a', NodeStatus.Succeeded), '2026-01-01T00:00:02.000Z'),
      at(node('old', NodeStatus.Failed), '2026-01-01T00:00:00.000Z'), // an earlier attempt's
      at(node('skipped', NodeStatus.Skipped), ''), // never ran
    ];
    t.recordSaved({ ...record(RunStatus.Running, ended), ...started });
    expect(events).toEqual([
      ['step:started', 'a'],
      ['step:finished', 'a'],
      ['step:finished', 'old'],
      ['step:finished', 'skipped'],
    ]);
  });

  it("publishes step:started for a worker's step stamped before the run (its clock behind)", () => {
    const bus = new InMemoryRunEvents({ clock });
    const events: unknown[] = [];
    bus.subscribe({ types: ['step'] }, (e) => events.push([e.type, e.data['stepName']]));
    const t = new RecordTransitions(bus);
    const claimed = { startedAt: '2026-01-01T00:00:10.000Z' }; // the coordinator's clock
    const a = (status: NodeStatus, startedAt: string) => ({ ...node('a', status), startedAt });
    t.recordSaved({ ...record(RunStatus.Running, [a(NodeStatus.NotStarted, '')]), ...claimed });
    // the worker's clock is 2 s behind: its step started "before" the run
    const done = a(NodeStatus.Succeeded, '2026-01-01T00:00:08.000Z');
    t.recordSaved({ ...record(RunStatus.Running, [done]), ...claimed });
    expect(events).toEqual([
      ['step:started', 'a'],
      ['step:finished', 'a'],
    ]);
  });

  it('tells a dequeued run apart from a started one', () => {
    const bus = new InMemoryRunEvents({ clock });
    const left: unknown[] = [];
    bus.subscribe({ types: ['queue:left'] }, (e) => left.push(e.data));
    const t = new RecordTransitions(bus);
    t.recordSaved(record(RunStatus.Queued, []));
    t.recordSaved(record(RunStatus.Cancelled, []));
    expect(left).toEqual([{ queue: 'd', reason: 'dequeued' }]);
  });

  it("publishes a run's end once when its final record is saved again, and a retry anew", () => {
    const bus = new InMemoryRunEvents({ clock });
    const types: string[] = [];
    bus.subscribe({ types: ['run'] }, (e) => types.push(e.type));
    const t = new RecordTransitions(bus);
    t.recordSaved(record(RunStatus.Running, [node('a', NodeStatus.Running)]));
    t.recordSaved(record(RunStatus.Failed, [node('a', NodeStatus.Failed)]));
    t.recordSaved(record(RunStatus.Failed, [node('a', NodeStatus.Failed)])); // saved again
    t.recordSaved(record(RunStatus.Running, [node('a', NodeStatus.Running)])); // retried
    t.recordSaved(record(RunStatus.Succeeded, [node('a', NodeStatus.Succeeded)]));
    expect(types).toEqual(['run:started', 'run:finished', 'run:started', 'run:finished']);
  });

  it('keeps the last saved record of a run that ended, and forgets it when the run goes on', () => {
    const t = new RecordTransitions(new InMemoryRunEvents({ clock }));
    const ref = { name: 'd', dagRunId: 'r' };
    t.recordSaved(record(RunStatus.Running, [node('a', NodeStatus.Running)]));
    expect(t.lastFinal(ref)).toBeUndefined();
    const failed = record(RunStatus.Failed, [node('a', NodeStatus.Failed)]);
    t.recordSaved(failed);
    expect(t.lastFinal(ref)).toBe(failed);
    const again = { ...failed, error: 'logs closed' };
    t.recordSaved(again); // saved again: the newest save is the one kept
    expect(t.lastFinal(ref)).toBe(again);
    t.recordSaved(record(RunStatus.Running, [node('a', NodeStatus.Running)])); // retried
    expect(t.lastFinal(ref)).toBeUndefined();
    expect(t.lastFinal({ name: 'd', dagRunId: 'other' })).toBeUndefined();
  });

  it('keeps whole records of the last 64 ended runs only', () => {
    const t = new RecordTransitions(new InMemoryRunEvents({ clock }));
    for (let i = 0; i < 65; i++) {
      const id = `r${i}`;
      t.recordSaved({
        ...record(RunStatus.Succeeded, []),
        dagRunId: id,
        root: { name: 'd', dagRunId: id },
      });
    }
    expect(t.lastFinal({ name: 'd', dagRunId: 'r0' })).toBeUndefined();
    expect(t.lastFinal({ name: 'd', dagRunId: 'r1' })?.dagRunId).toBe('r1');
    expect(t.lastFinal({ name: 'd', dagRunId: 'r64' })?.dagRunId).toBe('r64');
  });
});
