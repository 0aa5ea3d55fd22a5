import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus, type Clock } from '@trellis/core';
import type { RunActivation, RunDispatcher } from '@trellis/services';
import type { DagRunRecord } from '@trellis/spec';
import { FakeClock } from '@trellis/testkit';
import { fakeDispatcher } from '../support/fake-dispatcher.js';
import {
  createTempHome,
  localRunService,
  warningRecorder,
  type TempHome,
} from '../support/local-run-service.js';

/**
 * Child runs sent to workers by a selector (issue 6), against the real file store and /bin/sh,
 * with a fake dispatcher behind the port standing in for the coordinator and its workers.
 */
let t: TempHome;

/** The service's warn port is recorded here, so a test can await a warning. */
const service = (dispatcher: RunDispatcher | undefined, clock?: Clock) => {
  const w = warningRecorder();
  // the coordinator's writes reach the service through the dispatcher's run-update event
  const updates = new Set<(r: DagRunRecord) => void>();
  // (set on the test's own dispatcher object, so a test may still replace its other members)
  if (dispatcher)
    dispatcher.onRunUpdate = (l) => {
      updates.add(l);
      return () => updates.delete(l);
    };
  const s = localRunService(t, {
    warn: w.warn,
    ...(clock ? { clock } : {}),
    ...(dispatcher ? { dispatcher } : {}),
  });
  const update = (r: DagRunRecord): void => {
    for (const l of updates) l(r);
  };
  return { ...s, update, warnings: w.warnings, warned: w.warned };
};

const dag = (name: string, yaml: string): void => t.dag(name, yaml);

/** What the coordinator does when a worker reports: saves the record, then tells the service. */
const report = async (
  s: ReturnType<typeof service>,
  record: DagRunRecord,
  patch: Partial<DagRunRecord>,
): Promise<DagRunRecord> => {
  const stored = await s.store.getRun(record, { root: record.root });
  const next = { ...stored, ...patch, revision: stored.revision + 1 };
  await s.store.saveRun(next);
  s.update(next);
  return next;
};

/** A worker "b-1" starts the child. */
const runOnB = (s: ReturnType<typeof service>, a: RunActivation): Promise<DagRunRecord> => {
  const owner = { pid: 1, host: 'b', processStart: '', workerId: 'b-1' };
  return report(s, a.record, { status: RunStatus.Running, owner });
};

/** A worker "b-1" takes the child and finishes it with `outputs` on its first node. */
const succeedOn = async (
  s: ReturnType<typeof service>,
  a: RunActivation,
  outputs: Record<string, string>,
): Promise<void> => {
  await runOnB(s, a);
  const nodes = a.record.nodes.map((n) => ({ ...n, status: NodeStatus.Succeeded, outputs }));
  await report(s, a.record, { status: RunStatus.Succeeded, nodes, finishedAt: 'x' });
};

/** Starts DAG "parent" and resolves once its child was handed to the dispatcher. */
const startParent = async (s: ReturnType<typeof service>, w: ReturnType<typeof fakeDispatcher>) => {
  const dispatched = w.nextDispatch();
  const started = await s.runs.start({ dag: 'parent' });
  return { started, a: await dispatched };
};

const PARENT =
  'steps:\n' +
  '  - name: call-b\n    call: child\n    output: CHILD\n    workerSelector:\n      pool: b\n' +
  '  - name: show\n    command: echo ${CHILD.outputs.OUT}\n';

beforeEach(() => {
  t = createTempHome('trellis-remote-child-');
});
afterEach(() => t.cleanup());

describe('child runs for workers', () => {
  it('sends a child to workers by its step’s selector and returns its outputs', async () => {
    dag('parent', PARENT);
    dag('child', 'steps:\n  - {name: make, command: echo here, output: OUT}\n');
    const w = fakeDispatcher();
    const s = service(w.dispatcher);
    const { started, a } = await startParent(s, w);
    expect(a.selector).toEqual({ pool: 'b' });
    expect(a.record.parent).toEqual({ name: 'parent', dagRunId: started.record.dagRunId });
    const stored = await s.store.getRun(a.record, { root: a.record.root });
    expect(stored.status).toBe(RunStatus.Queued);
    expect(stored.owner).toBeUndefined();
    await succeedOn(s, a, { OUT: 'from-b' });
    const final = await started.done;
    expect(final.status).toBe(RunStatus.Succeeded);
    expect(readFileSync(final.nodes[1]?.stdout ?? '', 'utf8')).toBe('from-b\n');
    expect(final.nodes[0]?.children[0]?.status).toBe(RunStatus.Succeeded);
  });

  it('routes by the child DAG’s own selector when the step has none', async () => {
    dag('parent', 'steps:\n  - {name: call, call: child}\n');
    dag('child', 'workerSelector:\n  gpu: "true"\nsteps:\n  - echo gpu\n');
    const w = fakeDispatcher();
    const s = service(w.dispatcher);
    const { started, a } = await startParent(s, w);
    expect(a.selector).toEqual({ gpu: 'true' });
    await succeedOn(s, a, {});
    expect((await started.done).status).toBe(RunStatus.Succeeded);
  });

  it('keeps the child queued while no worker matches, saying why, then hands it over', async () => {
    dag('parent', PARENT);
    dag('child', 'steps:\n  - echo b\n');
    const w = fakeDispatcher();
    w.state.why = 'no healthy worker has labels pool=b';
    const s = service(w.dispatcher);
    const waiting = s.warned(/waits for a worker/);
    const started = await s.runs.start({ dag: 'parent' });
    await waiting;
    expect(w.dispatched).toHaveLength(0);
    expect(s.warnings.join('\n')).toMatch(/no healthy worker has labels pool=b/);
    const dispatched = w.nextDispatch();
    w.join();
    const a = await dispatched;
    expect(readFileSync(a.record.log, 'utf8')).toMatch(
      /waiting for a worker: no healthy worker has labels pool=b[\s\S]*handing the run to a worker with labels pool=b/,
    );
    await succeedOn(s, a, { OUT: 'late' });
    expect((await started.done).status).toBe(RunStatus.Succeeded);
  });

  it('fails the child and the step when no worker starts it within 10 s', async () => {
    dag('parent', PARENT);
    dag('child', 'steps:\n  - echo b\n');
    const clock = new FakeClock('2026-03-01T10:00:00Z');
    const w = fakeDispatcher();
    const s = service(w.dispatcher, clock);
    const limitSet = (async () => {
      while ((await clock.nextSleep()) !== 10_000); // the activation limit's timer
    })();
    const { started, a } = await startParent(s, w);
    await limitSet;
    await clock.advanceBy(9_999);
    expect((await s.store.getRun(a.record, { root: a.record.root })).status).toBe(RunStatus.Queued);
    await clock.advanceBy(1);
    const final = await started.done;
    expect(final.status).toBe(RunStatus.Failed);
    expect(final.nodes[0]?.error).toMatch(
      /failed: the run was handed to workers with labels pool=b but none started it within 10 s/,
    );
    const child = await s.store.getRun(a.record, { root: a.record.root });
    expect(child.status).toBe(RunStatus.Failed);
    expect(w.cancelled).toEqual([
      { ref: { name: 'child', dagRunId: a.record.dagRunId }, root: a.record.root },
    ]);
  });

  it('cancels the remote child when the parent is stopped; the step ends cancelled', async () => {
    dag('parent', PARENT);
    dag('child', 'steps:\n  - sleep 30\n');
    const w = fakeDispatcher();
    const s = service(w.dispatcher);
    const { started, a } = await startParent(s, w);
    await runOnB(s, a);
    const asked = new Promise<void>((resolve) => {
      w.dispatcher.cancel = (ref, root) => {
        w.cancelled.push({ ref, root });
        resolve();
        return Promise.resolve();
      };
    });
    await s.runs.stop(started.record);
    await asked;
    expect(w.cancelled[0]?.ref).toEqual({ name: 'child', dagRunId: a.record.dagRunId });
    expect(w.cancelled[0]?.root).toEqual(a.record.root);
    await report(s, a.record, { status: RunStatus.Cancelled, finishedAt: 'x' });
    const final = await started.done;
    expect(final.status).toBe(RunStatus.Cancelled);
    expect(final.nodes[0]?.status).toBe(NodeStatus.Cancelled);
  });

  it('fails the step with the child’s error when its worker is lost', async () => {
    dag('parent', PARENT);
    dag('child', 'steps:\n  - sleep 30\n');
    const w = fakeDispatcher();
    const s = service(w.dispatcher);
    const { started, a } = await startParent(s, w);
    await runOnB(s, a);
    const lost = 'worker "b-1" was lost: no heartbeat since 2026-03-01T10:00:00.000Z (over 15 s)';
    await report(s, a.record, { status: RunStatus.Failed, error: lost, finishedAt: 'x' });
    const final = await started.done;
    expect(final.status).toBe(RunStatus.Failed);
    expect(final.nodes[0]?.error).toBe(
      `child DAG run ${a.record.dagRunId} of "child" failed: ${lost}`,
    );
  });

  it('runs the child in this process when no dispatcher is configured (embedded mode)', async () => {
    dag('parent', PARENT);
    dag('child', 'steps:\n  - {name: make, command: echo local, output: OUT}\n');
    const s = service(undefined);
    const final = await (await s.runs.start({ dag: 'parent' })).done;
    expect(final.status).toBe(RunStatus.Succeeded);
    expect(readFileSync(final.nodes[1]?.stdout ?? '', 'utf8')).toBe('local\n');
  });
});
