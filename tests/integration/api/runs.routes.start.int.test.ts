import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { expectError } from '../support/expect-error.js';
import { useRunRoutes } from '../support/run-routes-fixture.js';

/** Starting runs: of a DAG file, and from an inline spec. */
const t = useRunRoutes();
const { api, stepRunning, startAndFinish } = t;

describe('POST /dags/{fileName}/start', () => {
  it('starts a run and answers its id; params are JSON object text or KEY=value text', async () => {
    t.h.dag('hello', 'params: WHO=x\nsteps:\n  - name: greet\n    command: echo "hi ${WHO}"\n');
    const res = await api()
      .post('/api/v2/dags/hello/start')
      .send({ params: '{"WHO":"json"}', dagRunId: 'r-1' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ dagRunId: 'r-1' });
    const run = await t.h.finished('hello', 'r-1');
    expect(run.status).toBe(RunStatus.Succeeded);
    const second = await startAndFinish('hello', { params: 'WHO="two words"' });
    expect(second.params).toEqual([{ name: 'WHO', value: 'two words' }]);
  });

  it('answers 404 for a missing DAG, 400 for a bad fileName or run id, 409 for a taken run id', async () => {
    t.h.dag('hello', 'steps:\n  - "true"\n');
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
    t.h.dag('slow', 'maxActiveRuns: 2\nsteps:\n  - {name: wait, command: "sleep 30"}\n');
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
    // a plain start beyond maxActiveRuns is queued, not refused
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
      t.h.finished('slow', 's1'),
      t.h.finished('slow', 's2'),
      t.h.finished('slow', 's3'),
    ]);
  });

  it('answers 400 for malformed JSON', async () => {
    t.h.dag('hello', 'steps:\n  - "true"\n');
    const res = await api()
      .post('/api/v2/dags/hello/start')
      .set('Content-Type', 'application/json')
      .send('{"params": ');
    expectError(res, 400, 'bad_request');
    expect((res.body as { message: string }).message).toMatch(/malformed JSON/);
  });
});

describe('POST /dag-runs (inline spec)', () => {
  it('starts a run from YAML in `spec` without storing a DAG file', async () => {
    const res = await api()
      .post('/api/v2/dag-runs')
      .send({ spec: 'steps:\n  - echo inline\n', name: 'inline-dag', dagRunId: 'i1' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ dagRunId: 'i1' });
    expect((await t.h.finished('inline-dag', 'i1')).status).toBe(RunStatus.Succeeded);
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
    await t.h.finished('once', 'dup');
    expectError(
      await api()
        .post('/api/v2/dag-runs')
        .send({ spec: 'name: once\nsteps:\n  - "true"\n', dagRunId: 'dup' }),
      409,
      'already_exists',
    );
  });
});
