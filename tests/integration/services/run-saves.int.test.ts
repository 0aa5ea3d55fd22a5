import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus } from '@trellis/core';
import { InMemoryRunEvents, RecordTransitions } from '@trellis/services';
import type { DagRunRecord } from '@trellis/spec';
import { FakeClock } from '@trellis/testkit';
import { createTempHome, localRunService, type TempHome } from '../support/local-run-service.js';

let t: TempHome;

beforeEach(() => {
  t = createTempHome('trellis-saves-');
});
afterEach(() => t.cleanup());

const STEPS = 20;

describe('record saves of a hosted run (issue 21: the save window)', () => {
  it('stores a run whose node changes wait in the window complete, with every step event', async () => {
    t.dag(
      'chain',
      `steps:\n${Array.from({ length: STEPS }, (_, i) => `  - {name: s${i}, command: "true"}`).join('\n')}\n`,
    );
    // the clock stands still: the window after the run's creation never ends by itself, so only
    // the run's creation and its end are written
    const clock = new FakeClock();
    const bus = new InMemoryRunEvents({ clock });
    const transitions = new RecordTransitions(bus);
    const saved: DagRunRecord[] = [];
    const { runs, store } = localRunService(t, {
      clock,
      onRecordSaved: (r) => {
        saved.push(r);
        transitions.recordSaved(r);
      },
    });
    const steps: string[] = [];
    bus.subscribe({ types: ['step'] }, (e) =>
      steps.push(`${e.type} ${String(e.data['stepName'])}`),
    );
    const final = await (await runs.start({ dag: 'chain' })).done;
    expect(final.status).toBe(RunStatus.Succeeded);
    expect(saved.map((r) => r.status)).toEqual([RunStatus.Running, RunStatus.Succeeded]);
    const stored = await store.getRun({ name: 'chain', dagRunId: final.dagRunId });
    expect(stored.revision).toBe(final.revision);
    expect(stored.nodes.map((n) => n.status)).toEqual(
      Array.from({ length: STEPS }, () => NodeStatus.Succeeded),
    );
    expect(steps).toEqual(
      Array.from({ length: STEPS }, (_, i) => [`step:started s${i}`, `step:finished s${i}`]).flat(),
    );
  });
});
