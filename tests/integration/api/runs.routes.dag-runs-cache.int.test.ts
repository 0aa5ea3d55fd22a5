import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toApiRunSummary, toGridData } from '@trellis/api';
import { NodeStatus, RunStatus, systemClock } from '@trellis/core';
import { FsRunStore } from '@trellis/store';
import { makeRecord } from '@trellis/testkit';
import { exitedOk, spawnTs, STORE_SRC } from '../../../packages/store/test/support/spawn-ts.js';
import { useRunRoutes } from '../support/run-routes-fixture.js';

/**
 * GET /dags/{fileName}/dag-runs answers the bytes of the records as they are now, also after a
 * run of this process or of another one changed, and a repeat answers 304 to its ETag: the
 * check any cache of this answer must pass (docs/decisions.md, "The run history grid kept
 * between requests: tried and taken back").
 */
const t = useRunRoutes();
const { api, stepRunning, startAndFinish } = t;
const ORDER = ['first', 'second'];

/** Another store instance on the same data folder: another process in production. */
const otherStore = () =>
  new FsRunStore({
    dataDir: join(t.h.home, 'data'),
    logDir: join(t.h.home, 'logs'),
    clock: systemClock,
  });

/**
 * Runs `code` in a separate Node process with `store`, a file store on the harness's data
 * folder (the CLI or another server in production), and resolves when it exited.
 */
const inAnotherProcess = async (code: string): Promise<void> => {
  const script = `
import { FsRunStore } from ${JSON.stringify(join(STORE_SRC, 'runs/fs-run-store.ts'))};
const clock = { now: () => new Date(), sleep: () => Promise.resolve() };
const store = new FsRunStore({ dataDir: ${JSON.stringify(join(t.h.home, 'data'))}, logDir: ${JSON.stringify(join(t.h.home, 'logs'))}, clock });
${code}
`;
  await exitedOk(spawnTs(t.h.home, 'writer', script));
};

/** The answer as the route made it before (res.json of the mapped records), read afresh. */
const expected = async (): Promise<string> => {
  const store = otherStore();
  const summaries = await store.listRuns({ name: 'a', limit: 30 });
  const runs = await Promise.all(summaries.map((s) => store.getRun(s)));
  return JSON.stringify({
    dagRuns: runs.map((r) => toApiRunSummary(r)),
    gridData: toGridData(runs, ORDER),
  });
};

const answer = async () => {
  const res = await api().get('/api/v2/dags/a/dag-runs').expect(200);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.text).toBe(await expected());
  return { text: res.text, etag: res.headers.etag as string };
};

describe('DAG run history answered from the records', () => {
  it('answers the same bytes after a new run, a status change and a step status change', async () => {
    t.h.dag(
      'a',
      'steps:\n  - {name: first, command: "true"}\n  - {name: second, command: "true"}\n',
    );
    await startAndFinish('a', { dagRunId: 'a1' });
    const first = await answer();
    expect(await answer()).toEqual(first); // unchanged: the same body and tag
    await api().get('/api/v2/dags/a/dag-runs').set('If-None-Match', first.etag).expect(304);

    await startAndFinish('a', { dagRunId: 'a2' });
    const second = await answer();
    expect(second.etag).not.toBe(first.etag);

    t.h.dag(
      'a',
      'steps:\n  - {name: first, command: "sleep 30"}\n  - {name: second, command: "true"}\n',
    );
    const running = stepRunning('first');
    await api().post('/api/v2/dags/a/start').send({ dagRunId: 'a3' }).expect(200);
    await running;
    // not compared byte for byte while it runs: its record may be saved again meanwhile
    const live = await api().get('/api/v2/dags/a/dag-runs').expect(200);
    expect(live.text).toContain('"dagRunId":"a3","name":"a","status":1');
    await api().post('/api/v2/dag-runs/a/a3/stop').expect(200);
    await t.h.finished('a', 'a3');
    expect((await answer()).text).toContain('"dagRunId":"a3","name":"a","status":3');

    // a step's status in a finished run: the run's status (and its index line) stays the same
    const before = await answer();
    await api()
      .patch('/api/v2/dag-runs/a/a1/steps/second/status')
      .send({ status: NodeStatus.Failed })
      .expect(200);
    const after = await answer();
    expect(after.text).not.toBe(before.text);
    expect(after.etag).not.toBe(before.etag);
  });

  it("shows another process's new run and its change to a run at once", async () => {
    t.h.dag(
      'a',
      'steps:\n  - {name: first, command: "true"}\n  - {name: second, command: "true"}\n',
    );
    await startAndFinish('a', { dagRunId: 'a1' });
    const first = await answer();

    const other = otherStore();
    const made = makeRecord({
      name: 'a',
      dagRunId: 'b1',
      status: RunStatus.Queued,
      createdAt: new Date(Date.now() + 60_000).toISOString(),
      queuedAt: new Date().toISOString(),
    });
    await other.createRun(made, { dag: { name: 'a', steps: [] }, localDags: [] });
    const created = await answer();
    expect(created.text).not.toBe(first.text);
    expect(created.text).toContain('"dagRunId":"b1"');

    // the other process changes a step of the finished run a1 (its run status stays the same)
    const a1 = await other.getRun({ name: 'a', dagRunId: 'a1' });
    const step = a1.nodes[0];
    if (step === undefined) throw new Error('a1 has no step');
    step.status = NodeStatus.Failed;
    a1.revision++;
    await other.saveRun(a1);
    const changed = await answer();
    expect(changed.text).not.toBe(created.text);
  });

  it("shows another process's deletion and two saves at one revision at once", async () => {
    t.h.dag(
      'a',
      'steps:\n  - {name: first, command: "true"}\n  - {name: second, command: "true"}\n',
    );
    await startAndFinish('a', { dagRunId: 'a1' });
    await startAndFinish('a', { dagRunId: 'a2' });
    const first = (await answer()).text;
    // two saves of a1 at one revision, each with another step failed: what setStepStatus or
    // lost-run recovery in two processes can write (a revision does not name one content)
    const revision = (await otherStore().getRun({ name: 'a', dagRunId: 'a1' })).revision + 1;
    const failing = (step: number) => `
const run = await store.getRun({ name: 'a', dagRunId: 'a1' });
run.nodes.forEach((n, i) => (n.status = i === ${step} ? ${NodeStatus.Failed} : ${NodeStatus.Succeeded}));
await store.saveRun({ ...run, revision: ${revision} });
`;
    await inAnotherProcess(`${failing(0)}\nawait store.deleteRun({ name: 'a', dagRunId: 'a2' });`);
    const second = (await answer()).text;
    expect(second).not.toBe(first);
    expect(second).not.toContain('"dagRunId":"a2"');
    const other = otherStore();
    const run = await other.getRun({ name: 'a', dagRunId: 'a1' });
    run.nodes.forEach((n, i) => (n.status = i === 1 ? NodeStatus.Failed : NodeStatus.Succeeded));
    await other.saveRun({ ...run, revision });
    expect((await answer()).text).not.toBe(second);
  });
});
