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
});
