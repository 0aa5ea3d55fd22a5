import { describe, expect, it } from 'vitest';
import { RunTransitions, type RunFacts } from './run-transitions.js';

const view = (over: Partial<RunFacts> = {}): RunFacts => ({
  name: 'x',
  dagRunId: 'r1',
  status: 1,
  queue: '',
  queuedAt: '',
  startedAt: '2026-01-02T03:00:00.000Z',
  finishedAt: '',
  revision: 1,
  ...over,
});

/** A RunTransitions whose reports are listed as `started r1`, `finished r1`. */
const setup = () => {
  const told: string[] = [];
  const t = new RunTransitions({
    started: (r) => told.push(`started ${r.dagRunId}`),
    finished: (r) => told.push(`finished ${r.dagRunId}`),
  });
  return { t, told };
};

describe('RunTransitions', () => {
  it('reports one start and one finish per execution, however often a view repeats', () => {
    const { t, told } = setup();
    t.observe(view({ revision: 1 }));
    t.observe(view({ revision: 2 })); // a step changed
    t.observe(view({ status: 4, revision: 3 }));
    t.observe(view({ status: 4, revision: 3 })); // the same view again
    t.observe(view({ status: 4, revision: 4 })); // a later save of the finished run
    expect(told).toEqual(['started r1', 'finished r1']);
  });

  it('ignores a view older than one applied', () => {
    const { t, told } = setup();
    t.observe(view({ status: 2, revision: 5 }));
    t.observe(view({ status: 1, revision: 3 }));
    expect(told).toEqual(['started r1', 'finished r1']);
  });

  it('reports a start and a finish for a run first seen final (a quick run)', () => {
    const { t, told } = setup();
    t.observe(view({ status: 6 }));
    expect(told).toEqual(['started r1', 'finished r1']);
  });

  it('counts a retry, which runs the finished run again, as a new execution', () => {
    const { t, told } = setup();
    t.observe(view({ status: 2, revision: 3 }));
    t.observe(view({ status: 1, revision: 4 }));
    t.observe(view({ status: 4, revision: 6 }));
    expect(told).toEqual(['started r1', 'finished r1', 'started r1', 'finished r1']);
  });

  it('never reports a run that did not start: queued, not started, dequeued', () => {
    const { t, told } = setup();
    t.observe(view({ status: 5, startedAt: '' }));
    t.observe(view({ status: 0, startedAt: '' }));
    t.observe(view({ status: 3, startedAt: '', revision: 2 }));
    expect(told).toEqual([]);
  });

  it('tells apart child runs of different roots with the same id', () => {
    const { t, told } = setup();
    t.observe(view({ dagRunId: 'c', root: { dagRunId: 'a' }, status: 4 }));
    t.observe(view({ dagRunId: 'c', root: { dagRunId: 'b' }, status: 4 }));
    expect(told).toHaveLength(4);
  });

  it('remembers a running run while many others finish', () => {
    const { t, told } = setup();
    t.observe(view({ dagRunId: 'long', revision: 1 }));
    for (let i = 0; i < 12_000; i++) t.observe(view({ dagRunId: `f${i}`, status: 4 }));
    told.length = 0;
    t.observe(view({ dagRunId: 'long', revision: 2 }));
    t.observe(view({ dagRunId: 'long', status: 4, revision: 3 }));
    expect(told).toEqual(['finished long']);
  });

  it('reports past runs once, and remembers a finished one only when asked', () => {
    const { t, told } = setup();
    t.observePast(view({ dagRunId: 'a', status: 4, revision: 3 }), false);
    t.observePast(view({ dagRunId: 'b', status: 4, revision: 3 }), true);
    t.observePast(view({ dagRunId: 'q', status: 5, startedAt: '' }), false);
    t.observe(view({ dagRunId: 'b', status: 4, revision: 3 })); // b's live view, applied after
    expect(told).toEqual(['started a', 'finished a', 'started b', 'finished b']);
  });
});
