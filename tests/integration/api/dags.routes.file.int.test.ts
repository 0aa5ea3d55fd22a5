import { describe, expect, it } from 'vitest';
import { dagYaml, useDagRoutes } from '../support/dag-routes-fixture.js';
import { expectError } from '../support/expect-error.js';
import {
  DagDetailsResponse,
  DagSpecResponse,
  ListDagsResponse,
  PutDagSpecResponse,
} from '@trellis/contract';

/** One DAG file: details, delete, spec, rename and suspend. */
const { api, write, read, files } = useDagRoutes();

describe('GET /dags/{fileName}', () => {
  it('answers the details, local DAGs, the latest run summary, suspension and errors', async () => {
    write(
      'multi.yaml',
      `${dagYaml('name: main\nhandlerOn:\n  failure:\n    command: notify.sh')}---\n${dagYaml('name: helper')}`,
    );
    const res = await api().get('/api/v2/dags/multi');
    expect(res.status).toBe(200);
    const body = DagDetailsResponse.parse(res.body);
    expect(body.dag).toMatchObject({
      name: 'main',
      maxActiveRuns: 1,
      handlerOn: { failure: { name: 'onFailure', command: 'notify.sh' } },
    });
    expect(body.dag.steps.map((s) => s.name)).toEqual(['s']);
    expect(body.localDags).toEqual([
      { name: 'helper', dag: expect.objectContaining({ name: 'helper' }) as unknown, errors: [] },
    ]);
    expect(body.latestDAGRun).toMatchObject({ dagRunId: '', name: 'main', status: 0 });
    expect(body).toMatchObject({ suspended: false, errors: [] });
  });

  it('answers 404 for a missing DAG and 400 for a bad fileName', async () => {
    expectError(await api().get('/api/v2/dags/missing'), 404, 'not_found');
    expectError(await api().get('/api/v2/dags/bad.name'), 400, 'bad_request', /fileName/);
  });
});

describe('DELETE /dags/{fileName}', () => {
  it('answers 204 with no body and removes the file', async () => {
    write('a.yaml', dagYaml());
    const res = await api().delete('/api/v2/dags/a');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(files()).toEqual([]);
  });

  it('answers 404 for a missing DAG and 400 for a bad fileName', async () => {
    expectError(await api().delete('/api/v2/dags/missing'), 404, 'not_found');
    expectError(await api().delete('/api/v2/dags/a%20b'), 400, 'bad_request');
  });
});

describe('GET and PUT /dags/{fileName}/spec', () => {
  it('answers the spec text, the DAG details and the problems', async () => {
    write('a.yaml', `# kept\n${dagYaml()}`);
    const res = await api().get('/api/v2/dags/a/spec');
    expect(res.status).toBe(200);
    const body = DagSpecResponse.parse(res.body);
    expect(body).toMatchObject({ spec: `# kept\n${dagYaml()}`, errors: [], dag: { name: 'a' } });
  });

  it('writes a valid spec and answers 200 {errors: []}', async () => {
    write('a.yaml', dagYaml());
    const res = await api()
      .put('/api/v2/dags/a/spec')
      .send({ spec: dagYaml('description: v2') });
    expect(res.status).toBe(200);
    expect(PutDagSpecResponse.parse(res.body)).toEqual({ errors: [] });
    expect(read('a.yaml')).toBe(dagYaml('description: v2'));
  });

  it('answers the problems with 200 and writes nothing', async () => {
    write('a.yaml', dagYaml());
    const res = await api().put('/api/v2/dags/a/spec').send({ spec: 'steps:\n  - comand: x\n' });
    expect(res.status).toBe(200);
    expect(PutDagSpecResponse.parse(res.body).errors.length).toBeGreaterThan(0);
    expect(read('a.yaml')).toBe(dagYaml());
  });

  it('answers 404 for a missing DAG and 400 for a missing body field', async () => {
    expectError(await api().get('/api/v2/dags/missing/spec'), 404, 'not_found');
    expectError(
      await api().put('/api/v2/dags/missing/spec').send({ spec: dagYaml() }),
      404,
      'not_found',
    );
    write('a.yaml', dagYaml());
    expectError(await api().put('/api/v2/dags/a/spec').send({}), 400, 'bad_request', /spec/);
  });
});

describe('POST /dags/{fileName}/rename', () => {
  it('answers 200 with an empty body and renames the file', async () => {
    write('old.yaml', dagYaml());
    const res = await api().post('/api/v2/dags/old/rename').send({ newFileName: 'new' });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(files()).toEqual(['new.yaml']);
  });

  it('answers 409 already_exists, 400 for a bad target, 404 for a missing source', async () => {
    write('a.yaml', dagYaml());
    write('b.yaml', dagYaml());
    expectError(
      await api().post('/api/v2/dags/a/rename').send({ newFileName: 'b' }),
      409,
      'already_exists',
    );
    expectError(
      await api().post('/api/v2/dags/a/rename').send({ newFileName: 'b.c' }),
      400,
      'bad_request',
      /newFileName/,
    );
    expectError(
      await api()
        .post('/api/v2/dags/a/rename')
        .send({ newFileName: 'x'.repeat(41) }),
      400,
      'bad_request',
    );
    expectError(await api().post('/api/v2/dags/a/rename').send({}), 400, 'bad_request');
    expectError(
      await api().post('/api/v2/dags/missing/rename').send({ newFileName: 'c' }),
      404,
      'not_found',
    );
    expect(files()).toEqual(['a.yaml', 'b.yaml']);
  });
});

describe('POST /dags/{fileName}/suspend', () => {
  it('answers 200 with an empty body; the DAG shows as suspended until resumed', async () => {
    write('a.yaml', dagYaml());
    const res = await api().post('/api/v2/dags/a/suspend').send({ suspend: true });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(DagDetailsResponse.parse((await api().get('/api/v2/dags/a')).body).suspended).toBe(true);
    expect(ListDagsResponse.parse((await api().get('/api/v2/dags')).body).dags[0]?.suspended).toBe(
      true,
    );
    await api().post('/api/v2/dags/a/suspend').send({ suspend: false });
    expect(DagDetailsResponse.parse((await api().get('/api/v2/dags/a')).body).suspended).toBe(
      false,
    );
  });

  it('answers 404 for a missing DAG and 400 without a boolean suspend', async () => {
    expectError(
      await api().post('/api/v2/dags/missing/suspend').send({ suspend: true }),
      404,
      'not_found',
    );
    write('a.yaml', dagYaml());
    expectError(
      await api().post('/api/v2/dags/a/suspend').send({ suspend: 'yes' }),
      400,
      'bad_request',
      /suspend/,
    );
  });
});
