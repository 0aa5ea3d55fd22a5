import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import { CoordinatorClient } from '@trellis/coordinator';
import type { DagRunRecord } from '@trellis/spec';
import { parentOnWorker, useFleetWithChildRuns } from '../../test/support/child-runs-fixture.js';
import { parseDag } from '../../test/support/fleet.js';
import { dagYaml } from '../../test/support/worker-fleet-fixture.js';

/**
 * Child runs sent to workers by a selector, in distributed mode with real processes on loopback
 * (issue 6, Tests): test/support/worker-fleet-fixture.ts and child-runs-fixture.ts.
 */
const { fleet, kids } = useFleetWithChildRuns();
const { worker, joined, newId } = fleet;
const { asked, dagFile, childOf } = kids;

describe('child runs sent to workers by a selector', { timeout: 60_000 }, () => {
  it('runs a call: step’s child on the worker its workerSelector names; the parent gets its outputs', async () => {
    await Promise.all([worker('pool-a', { pool: 'a' }), worker('pool-b', { pool: 'b' })]);
    await Promise.all([joined('pool-a'), joined('pool-b')]);
    dagFile(
      'calls-b',
      [
        'steps:',
        '  - name: on-b',
        '    call: child-b',
        '    output: CHILD',
        '    workerSelector:',
        '      pool: b',
        '  - name: show',
        '    command: echo ${CHILD.outputs.WHERE}',
        '',
      ].join('\n'),
    );
    dagFile('child-b', 'steps:\n  - {name: where, command: echo from-b, output: WHERE}\n');
    const final = await (await kids.runs.start({ dag: 'calls-b' })).done;
    expect(final.status).toBe(RunStatus.Succeeded);
    expect(final.owner?.workerId).toBe('local'); // the parent ran here, not on a worker
    const child = await childOf(final);
    expect(child.status).toBe(RunStatus.Succeeded);
    expect(child.owner?.workerId).toBe('pool-b');
    expect(child.parent).toEqual({ name: 'calls-b', dagRunId: final.dagRunId });
    expect(readFileSync(final.nodes[1]!.stdout, 'utf8')).toBe('from-b\n');
    expect(readFileSync(child.log, 'utf8')).toMatch(
      /handing the run to a worker with labels pool=b/,
    );
  });

  it('routes a child by its own DAG’s workerSelector when the step has none', async () => {
    await Promise.all([worker('pool-a2', { pool: 'a' }), worker('gpu-2', { gpu: 'true' })]);
    await Promise.all([joined('pool-a2'), joined('gpu-2')]);
    dagFile('calls-gpu', 'steps:\n  - {name: train, call: child-gpu, output: OUT}\n');
    dagFile(
      'child-gpu',
      'workerSelector:\n  gpu: "true"\nsteps:\n  - {name: fit, command: echo fitted, output: FIT}\n',
    );
    const final = await (await kids.runs.start({ dag: 'calls-gpu' })).done;
    expect(final.status).toBe(RunStatus.Succeeded);
    const child = await childOf(final);
    expect(child.owner?.workerId).toBe('gpu-2');
    expect(child.nodes[0]?.outputs).toEqual({ FIT: 'fitted' });
  });

  it('on a worker: runs a child its labels satisfy on that worker', async () => {
    await worker('wa-1', { pool: 'wa' });
    await joined('wa-1');
    const id = newId();
    await fleet.side.submit(
      parentOnWorker('on-wa', 'wa', 'wa', ['  - {name: where, command: echo here, output: WHERE}']),
      id,
    );
    const ok = await fleet.side.final(id);
    expect(ok.status).toBe(RunStatus.Succeeded);
    expect(ok.owner?.workerId).toBe('wa-1');
    expect((await childOf(ok)).owner?.workerId).toBe('wa-1');
    expect(ok.nodes[1]?.outputs).toEqual({ SHOWN: 'got-here' });
  });

  it('on a worker: a child whose selector its labels do not satisfy runs on a matching worker, through the coordinator', async () => {
    await Promise.all([worker('wa-2', { pool: 'wa2' }), worker('wb-2', { pool: 'wb2' })]);
    await Promise.all([joined('wa-2'), joined('wb-2')]);
    const id = newId();
    await fleet.side.submit(
      parentOnWorker('on-wa2', 'wa2', 'wb2', [
        '  - {name: where, command: echo from-wb, output: WHERE}',
      ]),
      id,
    );
    const final = await fleet.side.final(id);
    expect(final.status).toBe(RunStatus.Succeeded);
    expect(final.owner?.workerId).toBe('wa-2');
    const child = await childOf(final);
    expect(child.status).toBe(RunStatus.Succeeded);
    expect(child.owner?.workerId).toBe('wb-2');
    expect(child.parent).toEqual({ name: 'on-wa2', dagRunId: id });
    expect(child.root).toEqual({ name: 'on-wa2', dagRunId: id });
    expect(final.nodes[0]?.status).toBe(4);
    expect(final.nodes[1]?.outputs).toEqual({ SHOWN: 'got-from-wb' });
    expect(readFileSync(child.log, 'utf8')).toMatch(
      /handing the run to a worker with labels pool=wb2/,
    );
  });

  it('starts a child a worker asks for once, however often it asks (idempotent by run id)', async () => {
    const client = new CoordinatorClient({
      address: `127.0.0.1:${fleet.side.coordinator.port}`,
      clock: systemClock,
    });
    try {
      // The root: a run no worker takes (its selector matches none), as a parent on a worker.
      const root = { name: 'asker', dagRunId: newId() };
      await fleet.side.submit(
        dagYaml('asker', { role: 'idem-root' }, ['echo never']),
        root.dagRunId,
      );
      const kid = parseDag('name: twice\nsteps:\n  - echo once\n').dag;
      const start = {
        workerId: 'tool',
        run: { name: 'twice', dagRunId: `${root.dagRunId}-kid` },
        root,
        parent: root,
        snapshotJson: JSON.stringify({ dag: kid, localDags: [] }),
        params: '',
        selector: { pool: 'nobody-has-this' },
        traceparent: '',
      };
      const [a, b] = await Promise.all([client.startChild(start), client.startChild(start)]);
      expect([a.started, b.started].sort()).toEqual([false, true]);
      expect((await client.startChild(start)).started).toBe(false);
      const got = await client.getRun({ run: start.run, root });
      expect(got.found).toBe(true);
      const queued = JSON.parse(got.recordJson) as DagRunRecord;
      expect(queued.status).toBe(RunStatus.Queued);
      expect(queued.parent).toEqual(root);
      // No worker matches: it waits, queued, until stopped.
      expect((await client.cancel({ run: start.run, root })).forwarded).toBe(true);
      expect(asked.has(start.run.dagRunId)).toBe(true);
      expect((await asked.get(start.run.dagRunId))?.status).toBe(RunStatus.Cancelled);
      const ended = await fleet.side.store.getRun(start.run, { root });
      expect(ended.status).toBe(RunStatus.Cancelled);
      expect(ended.error).toBe('stopped before a worker started it');
    } finally {
      client.close();
    }
  });
});
