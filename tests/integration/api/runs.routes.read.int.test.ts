import { describe, expect, it } from 'vitest';
import { expectError } from '../support/expect-error.js';
import { useRunRoutes } from '../support/run-routes-fixture.js';
import { Pagination } from '@trellis/contract';
import {
  GridItemSchema,
  LogChunkSchema,
  RunDetailsSchema,
  RunSummarySchema,
} from '@trellis/contract';

/** Reading runs, their logs and their child runs. */
const t = useRunRoutes();
const { api, stepRunning, startAndFinish } = t;

describe('reading runs', () => {
  it('answers an empty log for a run that waits in its queue', async () => {
    // a queue of one, held by a running run
    t.h.dag('holder', 'steps:\n  - {name: wait, command: "sleep 30"}\n');
    const running = stepRunning('wait');
    await api().post('/api/v2/dags/holder/start').send({ dagRunId: 'h1' });
    await running;
    await api().post('/api/v2/dags/holder/enqueue').send({ dagRunId: 'h2' }).expect(200);
    const log = await api().get('/api/v2/dag-runs/holder/h2/log');
    expect(log.status).toBe(200);
    expect(LogChunkSchema.parse(log.body)).toEqual({
      content: '',
      lineCount: 0,
      totalLines: 0,
      hasMore: false,
      isEstimate: false,
    });
    await api().get('/api/v2/dag-runs/holder/h2/dequeue').expect(200);
    await api().post('/api/v2/dag-runs/holder/h1/stop').expect(200);
    await t.h.finished('holder', 'h1');
  });

  it('lists runs newest first with filters, and paginates when asked', async () => {
    t.h.dag('a', 'steps:\n  - "true"\n');
    t.h.dag('b', 'steps:\n  - "false"\n');
    await startAndFinish('a', { dagRunId: 'a1' });
    await startAndFinish('b', { dagRunId: 'b1' });
    await startAndFinish('a', { dagRunId: 'a2' });
    const all = await api().get('/api/v2/dag-runs');
    expect(all.status).toBe(200);
    const runs = (all.body as { dagRuns: unknown[] }).dagRuns.map((x) => RunSummarySchema.parse(x));
    expect(runs.map((x) => x.dagRunId)).toEqual(['a2', 'b1', 'a1']);
    expect(runs[0]).toMatchObject({
      name: 'a',
      rootDAGRunName: 'a',
      rootDAGRunId: 'a2',
      parentDAGRunName: '',
      parentDAGRunId: '',
      status: 4,
      statusLabel: 'finished',
      queuedAt: '',
      params: '{}',
    });
    expect((await api().get('/api/v2/dag-runs?name=a')).body.dagRuns).toHaveLength(2);
    expect(
      (await api().get('/api/v2/dag-runs?status=2')).body.dagRuns.map(
        (x: { dagRunId: string }) => x.dagRunId,
      ),
    ).toEqual(['b1']);
    expect(
      (await api().get('/api/v2/dag-runs/a?dagRunId=2')).body.dagRuns.map(
        (x: { dagRunId: string }) => x.dagRunId,
      ),
    ).toEqual(['a2']);
    const paged = await api().get('/api/v2/dag-runs?page=2&perPage=2');
    expect(paged.body.dagRuns).toHaveLength(1);
    expect(Pagination.parse(paged.body.pagination)).toEqual({
      totalRecords: 3,
      currentPage: 2,
      totalPages: 2,
      nextPage: null,
      prevPage: 1,
    });
    expectError(await api().get('/api/v2/dag-runs?status=7'), 400, 'bad_request');
    expectError(await api().get('/api/v2/dag-runs?perPage=1001'), 400, 'bad_request');
  });

  it('answers a run listing as JSON with an ETag: 304 while it is unchanged, 200 once a run changed', async () => {
    t.h.dag('c', 'steps:\n  - "true"\n');
    await startAndFinish('c', { dagRunId: 'c1' });
    const first = await api().get('/api/v2/dag-runs?name=c');
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first.text).toBe(JSON.stringify(first.body));
    const etag = first.headers['etag'] as string;
    expect(etag).toMatch(/^W\/"/);
    await api().get('/api/v2/dag-runs?name=c').set('If-None-Match', etag).expect(304);
    await startAndFinish('c', { dagRunId: 'c2' });
    const after = await api().get('/api/v2/dag-runs?name=c').set('If-None-Match', etag);
    expect(after.status).toBe(200);
    expect(after.body.dagRuns.map((x: { dagRunId: string }) => x.dagRunId)).toEqual(['c2', 'c1']);
  });

  it('answers run details under dagRunDetails (and latest), and under dagRun for the DAG; 404 for unknown runs', async () => {
    t.h.dag(
      'hello',
      'steps:\n  - {name: greet, command: echo hi}\nhandlerOn:\n  exit: {command: "true"}\n',
    );
    await startAndFinish('hello', { dagRunId: 'h1' });
    const details = RunDetailsSchema.parse(
      (await api().get('/api/v2/dag-runs/hello/h1')).body.dagRunDetails,
    );
    expect(details.nodes[0]).toMatchObject({
      status: 4,
      statusLabel: 'finished',
      retryCount: 0,
      doneCount: 1,
      error: '',
      children: [],
    });
    expect(details.nodes[0]?.step).toMatchObject({ name: 'greet', command: 'echo', args: ['hi'] });
    expect(details.onExit?.status).toBe(4);
    expect(details.onSuccess).toBeNull();
    expect((await api().get('/api/v2/dag-runs/hello/latest')).body.dagRunDetails.dagRunId).toBe(
      'h1',
    );
    expect(
      RunDetailsSchema.parse((await api().get('/api/v2/dags/hello/dag-runs/h1')).body.dagRun)
        .dagRunId,
    ).toBe('h1');
    expectError(await api().get('/api/v2/dag-runs/hello/nope'), 404, 'not_found');
    expectError(await api().get('/api/v2/dag-runs/bad%20name/x'), 400, 'bad_request');
  });

  it("answers a DAG's runs with the history grid", async () => {
    t.h.dag(
      'grid',
      'steps:\n  - {name: one, command: "true"}\n  - {name: two, command: "test -f /nonexistent"}\n',
    );
    await startAndFinish('grid', { dagRunId: 'g1' });
    await startAndFinish('grid', { dagRunId: 'g2' });
    const res = await api().get('/api/v2/dags/grid/dag-runs');
    expect(res.body.dagRuns.map((x: { dagRunId: string }) => x.dagRunId)).toEqual(['g2', 'g1']);
    expect(res.body.gridData.map((g: unknown) => GridItemSchema.parse(g))).toEqual([
      { name: 'one', history: [4, 4] },
      { name: 'two', history: [2, 2] },
    ]);
  });

  it('lists the grid rows in the order of the DAG, not by name', async () => {
    t.h.dag(
      'order',
      'type: graph\nsteps:\n  - {name: zeta, command: "true"}\n  - {name: alpha, command: "true", depends: [zeta]}\n  - {name: mid, command: "true", depends: [alpha]}\n',
    );
    await startAndFinish('order', { dagRunId: 'o1' });
    const res = await api().get('/api/v2/dags/order/dag-runs');
    expect(res.body.gridData.map((g: { name: string }) => g.name)).toEqual([
      'zeta',
      'alpha',
      'mid',
    ]);
  });

  it('reads the run log and step logs with head, tail, offset and limit; stdout by default', async () => {
    t.h.dag(
      'logs',
      'steps:\n  - name: many\n    command: for i in 1 2 3 4 5; do echo line$i; echo err$i >&2; done\n',
    );
    await startAndFinish('logs', { dagRunId: 'l1' });
    const out = LogChunkSchema.parse(
      (await api().get('/api/v2/dag-runs/logs/l1/steps/many/log')).body,
    );
    expect(out).toEqual({
      content: 'line1\nline2\nline3\nline4\nline5',
      lineCount: 5,
      totalLines: 5,
      hasMore: false,
      isEstimate: false,
    });
    expect(
      (await api().get('/api/v2/dag-runs/logs/l1/steps/many/log?stream=stderr&tail=2')).body
        .content,
    ).toBe('err4\nerr5');
    expect(
      (await api().get('/api/v2/dag-runs/logs/l1/steps/many/log?offset=2&limit=2')).body,
    ).toMatchObject({ content: 'line2\nline3', hasMore: true });
    const runLog = LogChunkSchema.parse(
      (await api().get('/api/v2/dag-runs/logs/l1/log?head=1')).body,
    );
    expect(runLog.content).toMatch(/run l1 of DAG "logs" started/);
    expectError(await api().get('/api/v2/dag-runs/logs/l1/log?limit=10001'), 400, 'bad_request');
    expectError(await api().get('/api/v2/dag-runs/logs/l1/steps/nope/log'), 404, 'not_found');
    expectError(
      await api().get('/api/v2/dag-runs/logs/l1/steps/many/log?stream=both'),
      400,
      'bad_request',
    );
  });
});

describe('child runs', () => {
  it('answers a child run, its log, its step log and step status change; 404 for an unknown child', async () => {
    t.h.dag('parent', 'steps:\n  - {name: call, run: kid}\n');
    t.h.dag('kid', 'steps:\n  - {name: inside, command: echo from-kid}\n');
    const run = await startAndFinish('parent', { dagRunId: 'p1' });
    const childId = run.nodes[0]?.children[0]?.dagRunId ?? '';
    const details = RunDetailsSchema.parse(
      (await api().get(`/api/v2/dag-runs/parent/p1/children/${childId}`)).body.dagRunDetails,
    );
    expect(details).toMatchObject({
      name: 'kid',
      rootDAGRunName: 'parent',
      rootDAGRunId: 'p1',
      parentDAGRunName: 'parent',
      parentDAGRunId: 'p1',
    });
    const parentDetails = RunDetailsSchema.parse(
      (await api().get('/api/v2/dag-runs/parent/p1')).body.dagRunDetails,
    );
    expect(parentDetails.nodes[0]?.children).toEqual([
      { dagRunId: childId, params: '', name: 'kid', status: 4, statusLabel: 'finished' },
    ]);
    expect(
      (await api().get(`/api/v2/dag-runs/parent/p1/children/${childId}/log`)).body.content,
    ).toMatch(/started/);
    expect(
      (await api().get(`/api/v2/dag-runs/parent/p1/children/${childId}/steps/inside/log`)).body
        .content,
    ).toBe('from-kid');
    expect(
      (
        await api()
          .patch(`/api/v2/dag-runs/parent/p1/children/${childId}/steps/inside/status`)
          .send({ status: 2 })
      ).status,
    ).toBe(200);
    expectError(await api().get('/api/v2/dag-runs/parent/p1/children/nochild'), 404, 'not_found');
  });
});
