import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeStatus, RunStatus } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { apiHarness, type ApiHarness } from '../testing/api-harness.js';
import {
  ErrorBody,
  GridItemSchema,
  LogChunkSchema,
  Pagination,
  QueueSchema,
  RunDetailsSchema,
  RunSummarySchema,
} from '@trellis/contract';
import { queueRoutes } from './queues.routes.js';
import { runRoutes } from './runs.routes.js';

let h: ApiHarness;
beforeEach(() => {
  h = apiHarness([runRoutes, queueRoutes], { queueConfig: [{ name: 'batch', maxConcurrency: 2 }] });
});
afterEach(() => h.cleanup());

const api = () => request(h.app);

/** Waits until a step of a run is running (its status is durable before the event fires). */
const stepRunning = (step: string): Promise<DagRunRecord> =>
  new Promise((resolve) => {
    const on = (r: DagRunRecord, name: string, status: number): void => {
      if (name === step && status === NodeStatus.Running) {
        h.events.off('node:statusChanged', on);
        resolve(r);
      }
    };
    h.events.on('node:statusChanged', on);
  });

const expectError = (res: request.Response, status: number, code: string): void => {
  expect(res.status).toBe(status);
  expect(ErrorBody.parse(res.body).code).toBe(code);
};

const startAndFinish = async (file: string, body: object = {}): Promise<DagRunRecord> => {
  const res = await api().post(`/api/v2/dags/${file}/start`).send(body);
  expect(res.status).toBe(200);
  return h.finished(file, (res.body as { dagRunId: string }).dagRunId);
};

describe('POST /dags/{fileName}/start', () => {
  it('starts a run and answers its id; params are JSON object text or KEY=value text', async () => {
    h.dag('hello', 'params: WHO=x\nsteps:\n  - name: greet\n    command: echo "hi ${WHO}"\n');
    const res = await api()
      .post('/api/v2/dags/hello/start')
      .send({ params: '{"WHO":"json"}', dagRunId: 'r-1' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ dagRunId: 'r-1' });
    const run = await h.finished('hello', 'r-1');
    expect(run.status).toBe(RunStatus.Succeeded);
    const second = await startAndFinish('hello', { params: 'WHO="two words"' });
    expect(second.params).toEqual([{ name: 'WHO', value: 'two words' }]);
  });

  it('answers 404 for a missing DAG, 400 for a bad fileName or run id, 409 for a taken run id', async () => {
    h.dag('hello', 'steps:\n  - "true"\n');
    expectError(await api().post('/api/v2/dags/nope/start').send({}), 404, 'not_found');
    expectError(await api().post('/api/v2/dags/bad.name/start').send({}), 400, 'bad_request');
    expectError(
      await api().post('/api/v2/dags/hello/start').send({ dagRunId: 'no spaces' }),
      400,
      'bad_request',
    );
    await startAndFinish('hello', { dagRunId: 'same' });
    expectError(
      await api().post('/api/v2/dags/hello/start').send({ dagRunId: 'same' }),
      409,
      'already_exists',
    );
  });

  it('answers 409 already_running for a singleton start of a running DAG, and queues a start beyond maxActiveRuns', async () => {
    h.dag('slow', 'maxActiveRuns: 2\nsteps:\n  - {name: wait, command: "sleep 30"}\n');
    const running = stepRunning('wait');
    const first = await api().post('/api/v2/dags/slow/start').send({ dagRunId: 's1' });
    expect(first.status).toBe(200);
    await running;
    expectError(
      await api().post('/api/v2/dags/slow/start').send({ singleton: true }),
      409,
      'already_running',
    );
    const second = stepRunning('wait');
    expect((await api().post('/api/v2/dags/slow/start').send({ dagRunId: 's2' })).status).toBe(200);
    await second;
    // ARCHITECTURE.md section 6: a plain start beyond maxActiveRuns is queued, not refused
    const third = await api().post('/api/v2/dags/slow/start').send({ dagRunId: 's3' });
    expect(third.status).toBe(200);
    expect(third.body).toEqual({ dagRunId: 's3' });
    const queued = await api().get('/api/v2/dag-runs/slow/s3');
    const details = (
      queued.body as { dagRunDetails: { status: number; queuedAt: string; startedAt: string } }
    ).dagRunDetails;
    expect(details.status).toBe(5);
    expect(details.queuedAt).not.toBe('');
    expect(details.startedAt).toBe('');
    // when a slot frees, s3 starts at once; stop everything
    const thirdRunning = stepRunning('wait');
    await api().post('/api/v2/dag-runs/slow/s1/stop').expect(200);
    await thirdRunning;
    expect((await api().post('/api/v2/dags/slow/stop-all')).body).toEqual({ errors: [] });
    await Promise.all([
      h.finished('slow', 's1'),
      h.finished('slow', 's2'),
      h.finished('slow', 's3'),
    ]);
  });

  it('answers 400 for malformed JSON', async () => {
    h.dag('hello', 'steps:\n  - "true"\n');
    const res = await api()
      .post('/api/v2/dags/hello/start')
      .set('Content-Type', 'application/json')
      .send('{"params": ');
    expectError(res, 400, 'bad_request');
    expect((res.body as { message: string }).message).toMatch(/malformed JSON/);
  });
});

describe('reading runs', () => {
  it('answers an empty log for a run that waits in its queue', async () => {
    // a queue of one, held by a running run
    h.dag('holder', 'steps:\n  - {name: wait, command: "sleep 30"}\n');
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
    await h.finished('holder', 'h1');
  });

  it('lists runs newest first with filters, and paginates when asked', async () => {
    h.dag('a', 'steps:\n  - "true"\n');
    h.dag('b', 'steps:\n  - "false"\n');
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

  it('answers run details under dagRunDetails (and latest), and under dagRun for the DAG; 404 for unknown runs', async () => {
    h.dag(
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
    h.dag(
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

  it('reads the run log and step logs with head, tail, offset and limit; stdout by default', async () => {
    h.dag(
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

describe('changing runs', () => {
  it('stops a running run (200, then cancelled); 400 not_running afterwards; 404 unknown', async () => {
    h.dag('slow', 'steps:\n  - {name: wait, command: "sleep 30"}\n');
    const running = stepRunning('wait');
    await api().post('/api/v2/dags/slow/start').send({ dagRunId: 'x1' });
    await running;
    const res = await api().post('/api/v2/dag-runs/slow/x1/stop');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect((await h.finished('slow', 'x1')).status).toBe(RunStatus.Cancelled);
    expectError(await api().post('/api/v2/dag-runs/slow/x1/stop'), 400, 'not_running');
    expectError(await api().post('/api/v2/dag-runs/slow/nope/stop'), 404, 'not_found');
  });

  it('retries as a new run; 400 already_running while the DAG runs; 409 for a taken id; 404 unknown', async () => {
    h.dag('flaky', 'steps:\n  - {name: a, command: "true"}\n');
    await startAndFinish('flaky', { dagRunId: 'f1' });
    const res = await api().post('/api/v2/dag-runs/flaky/f1/retry').send({ dagRunId: 'f2' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ dagRunId: 'f2' });
    expect((await h.finished('flaky', 'f2')).status).toBe(RunStatus.Succeeded);
    expectError(
      await api().post('/api/v2/dag-runs/flaky/f1/retry').send({ dagRunId: 'f2' }),
      409,
      'already_exists',
    );
    expectError(await api().post('/api/v2/dag-runs/flaky/nope/retry').send({}), 404, 'not_found');
  });

  it('answers 400 already_running for a retry while another run of the DAG runs', async () => {
    h.dag('slow', 'maxActiveRuns: -1\nsteps:\n  - {name: wait, command: "sleep 30"}\n');
    const r1 = stepRunning('wait');
    await api().post('/api/v2/dags/slow/start').send({ dagRunId: 'o1' });
    await r1;
    await api().post('/api/v2/dag-runs/slow/o1/stop');
    await h.finished('slow', 'o1');
    const r2 = stepRunning('wait');
    await api().post('/api/v2/dags/slow/start').send({ dagRunId: 'o2' });
    await r2;
    expectError(
      await api().post('/api/v2/dag-runs/slow/o1/retry').send({}),
      400,
      'already_running',
    );
    await api().post('/api/v2/dag-runs/slow/o2/stop');
    await h.finished('slow', 'o2');
  });

  it('dequeue answers 404 for a run that is not queued', async () => {
    h.dag('hello', 'steps:\n  - "true"\n');
    await startAndFinish('hello', { dagRunId: 'd1' });
    expectError(await api().get('/api/v2/dag-runs/hello/d1/dequeue'), 404, 'not_found');
  });

  it('sets a step status 0-5, refusing other values and unknown steps', async () => {
    h.dag('two', 'steps:\n  - {name: a, command: "false"}\n  - {name: b, command: "true"}\n');
    await startAndFinish('two', { dagRunId: 't1' });
    expect(
      (await api().patch('/api/v2/dag-runs/two/t1/steps/a/status').send({ status: 4 })).status,
    ).toBe(200);
    expect((await h.store.getRun({ name: 'two', dagRunId: 't1' })).nodes[0]?.status).toBe(4);
    expectError(
      await api().patch('/api/v2/dag-runs/two/t1/steps/a/status').send({ status: 6 }),
      400,
      'bad_request',
    );
    expectError(
      await api().patch('/api/v2/dag-runs/two/t1/steps/a/status').send({ status: 'done' }),
      400,
      'bad_request',
    );
    expectError(
      await api().patch('/api/v2/dag-runs/two/t1/steps/zz/status').send({ status: 1 }),
      404,
      'not_found',
    );
  });
});

describe('child runs', () => {
  it('answers a child run, its log, its step log and step status change; 404 for an unknown child', async () => {
    h.dag('parent', 'steps:\n  - {name: call, run: kid}\n');
    h.dag('kid', 'steps:\n  - {name: inside, command: echo from-kid}\n');
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

describe('POST /dag-runs (inline spec)', () => {
  it('starts a run from YAML in `spec` without storing a DAG file', async () => {
    const res = await api()
      .post('/api/v2/dag-runs')
      .send({ spec: 'steps:\n  - echo inline\n', name: 'inline-dag', dagRunId: 'i1' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ dagRunId: 'i1' });
    expect((await h.finished('inline-dag', 'i1')).status).toBe(RunStatus.Succeeded);
  });

  it('answers 400 without a spec, without a name, with a bad name or an invalid spec; 409 for a taken id', async () => {
    expectError(await api().post('/api/v2/dag-runs').send({ name: 'x' }), 400, 'bad_request');
    expectError(
      await api().post('/api/v2/dag-runs').send({ spec: 'steps:\n  - "true"\n' }),
      400,
      'bad_request',
    );
    expectError(
      await api().post('/api/v2/dag-runs').send({ spec: 'steps:\n  - "true"\n', name: 'bad name' }),
      400,
      'bad_request',
    );
    const invalid = await api()
      .post('/api/v2/dag-runs')
      .send({ spec: 'name: x\nsteps:\n  - {comand: y}\n' });
    expectError(invalid, 400, 'bad_request');
    expect((invalid.body as { message: string }).message).toMatch(/unknown field "comand"/);
    await api()
      .post('/api/v2/dag-runs')
      .send({ spec: 'name: once\nsteps:\n  - "true"\n', dagRunId: 'dup' });
    await h.finished('once', 'dup');
    expectError(
      await api()
        .post('/api/v2/dag-runs')
        .send({ spec: 'name: once\nsteps:\n  - "true"\n', dagRunId: 'dup' }),
      409,
      'already_exists',
    );
  });
});

describe('queues and workers', () => {
  it('lists configured custom queues and dag-based queues with running runs', async () => {
    h.dag('slow', 'steps:\n  - {name: wait, command: "sleep 30"}\n');
    const running = stepRunning('wait');
    await api().post('/api/v2/dags/slow/start').send({ dagRunId: 'q1' });
    await running;
    const queues = (await api().get('/api/v2/queues')).body.queues.map((q: unknown) =>
      QueueSchema.parse(q),
    );
    expect(queues).toEqual([
      {
        name: 'batch',
        type: 'custom',
        maxConcurrency: 2,
        summary: { running: 0, queued: 0, total: 0 },
        runningDAGRuns: [],
        queuedDAGRuns: [],
      },
      expect.objectContaining({
        name: 'slow',
        type: 'dag-based',
        summary: { running: 1, queued: 0, total: 1 },
      }),
    ]);
    expect(queues[1]?.maxConcurrency).toBeUndefined();
    await api().post('/api/v2/dag-runs/slow/q1/stop');
    await h.finished('slow', 'q1');
  });

  it('answers 503 service_unavailable for workers without a coordinator', async () => {
    expectError(await api().get('/api/v2/workers'), 503, 'service_unavailable');
  });
});
