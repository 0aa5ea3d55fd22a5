import { describe, expect, it } from 'vitest';
import { RemoteRuns, type RemoteRun } from './remote-runs.js';

const run = (p: Partial<RemoteRun> & Pick<RemoteRun, 'ref' | 'root'>): RemoteRun => ({
  workerId: 'w1',
  selector: {},
  seq: 0,
  unwatch: () => undefined,
  cancelRequested: false,
  unlisted: false,
  finishing: false,
  ...p,
});

describe('RemoteRuns.slotsOf', () => {
  it('counts top-level runs and dispatched child runs, not children inside their parent’s slot', () => {
    const runs = new RemoteRuns();
    const root = { name: 'p', dagRunId: 'r1' };
    runs.add(run({ ref: root, root }));
    // a child run the worker started for a step of its own run: inside the parent's slot
    runs.add(run({ ref: { name: 'c', dagRunId: 'c1' }, root }));
    // a child run sent to workers by its step's selector: took a slot of its own
    const other = { name: 'q', dagRunId: 'r2' };
    runs.add(run({ ref: { name: 'c', dagRunId: 'c2' }, root: other, dispatchedAtMs: 1 }));
    expect(runs.slotsOf('w1')).toBe(2);
    expect(runs.slotsOf('w2')).toBe(0);
  });
});
