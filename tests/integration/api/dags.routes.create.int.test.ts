import { describe, expect, it } from 'vitest';
import { dagYaml, useDagRoutes } from '../support/dag-routes-fixture.js';
import { expectError } from '../support/expect-error.js';
import { CreateDagResponse, ValidateDagResponse } from '@trellis/contract';

/** Creating a DAG file and validating a spec. */
const { api, write, read, files } = useDagRoutes();

describe('POST /dags', () => {
  it('creates a minimal one-step DAG without a spec: 201 {name}', async () => {
    const res = await api().post('/api/v2/dags').send({ name: 'hello' });
    expect(res.status).toBe(201);
    expect(CreateDagResponse.parse(res.body)).toEqual({ name: 'hello' });
    expect(read('hello.yaml')).toBe('steps:\n  - name: hello\n    command: echo hello\n');
  });

  it('creates the file from a valid spec as given', async () => {
    const spec = dagYaml('description: given');
    expect((await api().post('/api/v2/dags').send({ name: 'given', spec })).status).toBe(201);
    expect(read('given.yaml')).toBe(spec);
  });

  it('answers 400 for an invalid spec, listing the problems, and writes nothing', async () => {
    const res = await api().post('/api/v2/dags').send({
      name: 'bad',
      spec: 'schedule: nope\nsteps:\n  - name: a\n    depends: [x]\n    command: y\n',
    });
    expectError(
      res,
      400,
      'bad_request',
      /^the spec has 2 problem\(s\): line 1: schedule: .*; line 4: /,
    );
    expect(files()).toEqual([]);
  });

  it.each([['bad name'], ['a.b'], ['x'.repeat(41)], [''], ['search']])(
    'answers 400 for the name %j',
    async (name) => {
      expectError(await api().post('/api/v2/dags').send({ name }), 400, 'bad_request');
      expect(files()).toEqual([]);
    },
  );

  it('answers 400 for a missing name and for malformed JSON', async () => {
    expectError(await api().post('/api/v2/dags').send({}), 400, 'bad_request', /name/);
    expectError(
      await api().post('/api/v2/dags').set('Content-Type', 'application/json').send('{"name":'),
      400,
      'bad_request',
      /malformed JSON/,
    );
  });

  it('answers 409 already_exists for an existing file and keeps it', async () => {
    write('taken.yaml', 'original');
    expectError(
      await api().post('/api/v2/dags').send({ name: 'taken', spec: dagYaml() }),
      409,
      'already_exists',
    );
    expect(read('taken.yaml')).toBe('original');
  });
});

describe('POST /dags/validate', () => {
  it('answers 200 valid with the DAG summary, using name when the spec has none', async () => {
    const res = await api().post('/api/v2/dags/validate').send({ spec: dagYaml(), name: 'named' });
    expect(res.status).toBe(200);
    const body = ValidateDagResponse.parse(res.body);
    expect(body).toMatchObject({ valid: true, errors: [], dag: { name: 'named' } });
  });

  it('answers 200 with the problems and the partial DAG, and persists nothing', async () => {
    const res = await api()
      .post('/api/v2/dags/validate')
      .send({ spec: 'description: partial\nsteps:\n  - comand: x\n' });
    expect(res.status).toBe(200);
    const body = ValidateDagResponse.parse(res.body);
    expect(body.valid).toBe(false);
    expect(body.errors.length).toBeGreaterThan(0);
    expect(body.dag?.description).toBe('partial');
    expect(files()).toEqual([]);
  });

  it('answers 200 valid=false for an invalid name', async () => {
    const body = ValidateDagResponse.parse(
      (await api().post('/api/v2/dags/validate').send({ spec: dagYaml(), name: 'bad name' })).body,
    );
    expect(body.valid).toBe(false);
    expect(body.errors).toEqual([expect.stringMatching(/invalid DAG name/)]);
  });

  it('answers 200 valid=false naming the missing spec (spec: always 200)', async () => {
    const res = await api().post('/api/v2/dags/validate').send({});
    expect(res.status).toBe(200);
    expect(ValidateDagResponse.parse(res.body)).toEqual({
      valid: false,
      errors: ['spec is required: send the DAG definition as YAML text in "spec"'],
    });
  });

  it('answers 400 naming the field for a spec that is not a string', async () => {
    expectError(
      await api().post('/api/v2/dags/validate').send({ spec: 5 }),
      400,
      'bad_request',
      /spec/,
    );
  });
});
