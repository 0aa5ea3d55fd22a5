import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Application } from 'express';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { FsDagDefinitions } from '@trellis/services';
import { parseDagFile, type DagRunRecord } from '@trellis/spec';
import { FakeClock, makeRunRecord } from '@trellis/testkit';
import { noAuth, type Authenticator } from '../http/auth.js';
import { createHttpApp } from '../http/create-http-app.js';
import type { HttpDeps } from '../http/deps.js';
import {
  ErrorBody,
  CreateDagResponse,
  DagDetailsResponse,
  DagSpecResponse,
  DagTagsResponse,
  ListDagsResponse,
  PutDagSpecResponse,
  SearchDagsResponse,
  ValidateDagResponse,
} from '@trellis/contract';
import { dagRoutes } from './dags.routes.js';

let home: string;
let dagsDir: string;
let latest: Map<string, DagRunRecord>;

const appWith = (auth: Authenticator): Application => {
  const clock = new FakeClock('2026-01-02T03:04:05.000Z');
  const dags = new FsDagDefinitions({
    dagsDir,
    suspendDir: join(home, 'suspend'),
    clock,
    latestRun: (name) => Promise.resolve(latest.get(name)),
  });
  const deps: HttpDeps = {
    version: '0.0.0-test',
    startedAt: clock.now(),
    clock,
    dags,
    runs: {} as never,
    runQueries: {} as never,
    auth,
    log: { warn: () => undefined, error: () => undefined },
    health: () => Promise.resolve({}),
    metrics: () => Promise.resolve({ contentType: 'text/plain', body: '' }),
  };
  return createHttpApp(deps, [dagRoutes]);
};

let app: Application;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'trellis-api-dags-'));
  dagsDir = join(home, 'dags');
  mkdirSync(dagsDir);
  latest = new Map();
  app = appWith(noAuth);
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const api = () => request(app);
const write = (entry: string, text: string): void => writeFileSync(join(dagsDir, entry), text);
const read = (entry: string): string => readFileSync(join(dagsDir, entry), 'utf8');
const files = (): string[] => readdirSync(dagsDir).sort();
const dagYaml = (extra = ''): string =>
  `${extra}${extra ? '\n' : ''}steps:\n  - name: s\n    command: echo s\n`;

const expectError = (
  res: request.Response,
  status: number,
  code: string,
  message?: RegExp,
): void => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  const body = ErrorBody.parse(res.body);
  expect(body.code).toBe(code);
  if (message) expect(body.message).toMatch(message);
};

describe('GET /dags', () => {
  it('lists DAG files with the spec shape: summary, "not started" or latest run, suspension, errors', async () => {
    write(
      'etl.yaml',
      dagYaml('description: nightly\ntags: [ETL]\nschedule: "0 2 * * *"\nparams: DAY=today'),
    );
    write('report.yaml', dagYaml());
    latest.set('report', {
      ...makeRunRecord(parseDagFile(dagYaml(), { name: 'report' }).main.dag, 'r-7'),
      status: RunStatus.Succeeded,
    });
    const res = await api().get('/api/v2/dags');
    expect(res.status).toBe(200);
    const body = ListDagsResponse.parse(res.body);
    expect(body.errors).toEqual([]);
    expect(body.pagination).toEqual({
      totalRecords: 2,
      currentPage: 1,
      totalPages: 1,
      nextPage: null,
      prevPage: null,
    });
    const [etl, report] = body.dags;
    expect(etl).toMatchObject({
      fileName: 'etl',
      suspended: false,
      errors: [],
      dag: {
        name: 'etl',
        description: 'nightly',
        tags: ['ETL'],
        schedule: [{ expression: '0 2 * * *' }],
        params: ['DAY=today'],
        group: '',
      },
      latestDAGRun: {
        dagRunId: '',
        name: 'etl',
        status: 0,
        statusLabel: 'not started',
        startedAt: '',
        finishedAt: '',
      },
    });
    expect(report?.latestDAGRun).toMatchObject({
      dagRunId: 'r-7',
      name: 'report',
      status: 4,
      statusLabel: 'finished',
    });
  });

  it('answers empty lists, never null, without DAGs', async () => {
    const res = await api().get('/api/v2/dags');
    expect(res.body).toEqual({
      dags: [],
      errors: [],
      pagination: {
        totalRecords: 0,
        currentPage: 1,
        totalPages: 1,
        nextPage: null,
        prevPage: null,
      },
    });
  });

  it('pages, filters by name and tag, and sorts by name or nextRun in either order', async () => {
    write('a.yaml', dagYaml('tags: [daily]\nschedule: "CRON_TZ=UTC 0 9 * * *"'));
    write('b.yaml', dagYaml('tags: [Daily]'));
    write('c.yaml', dagYaml('name: zulu\nschedule: "CRON_TZ=UTC 0 4 * * *"'));
    const names = async (qs: string): Promise<string[]> => {
      const res = await api().get(`/api/v2/dags?${qs}`);
      expect(res.status).toBe(200);
      return ListDagsResponse.parse(res.body).dags.map((d) => d.fileName);
    };
    expect(await names('')).toEqual(['a', 'b', 'c']);
    expect(await names('order=desc')).toEqual(['c', 'b', 'a']);
    expect(await names('sort=nextRun')).toEqual(['c', 'a', 'b']);
    expect(await names('sort=nextRun&order=desc')).toEqual(['a', 'c', 'b']);
    expect(await names('tag=DAILY')).toEqual(['a', 'b']);
    expect(await names('name=ZUL')).toEqual(['c']);
    expect(await names('remoteNode=local&perPage=1000')).toEqual(['a', 'b', 'c']);
    const page2 = ListDagsResponse.parse((await api().get('/api/v2/dags?page=2&perPage=2')).body);
    expect(page2.dags.map((d) => d.fileName)).toEqual(['c']);
    expect(page2.pagination).toEqual({
      totalRecords: 3,
      currentPage: 2,
      totalPages: 2,
      nextPage: null,
      prevPage: 1,
    });
  });

  it.each([
    ['page=0', /page: must be at least 1/],
    ['page=x', /page: /],
    ['perPage=0', /perPage: must be at least 1/],
    ['perPage=1001', /perPage: must be at most 1000/],
    ['perPage=2.5', /perPage: must be an integer/],
    ['sort=date', /sort: must be "name" or "nextRun"/],
    ['order=up', /order: must be "asc" or "desc"/],
  ])('answers 400 naming the parameter for %s, never clamping', async (qs, message) => {
    expectError(await api().get(`/api/v2/dags?${qs}`), 400, 'bad_request', message);
  });

  it('reports unreadable files in errors with 200 and lists files with problems with their errors', async () => {
    symlinkSync(join(dagsDir, 'loop.yaml'), join(dagsDir, 'loop.yaml'));
    write('broken.yaml', 'steps: [');
    const res = await api().get('/api/v2/dags');
    expect(res.status).toBe(200);
    const body = ListDagsResponse.parse(res.body);
    expect(body.errors).toEqual([expect.stringMatching(/^reading loop\.yaml failed: /)]);
    expect(body.dags.map((d) => [d.fileName, d.errors.length > 0])).toEqual([['broken', true]]);
  });
});

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

describe('GET /dags/search', () => {
  beforeEach(() => {
    write('etl.yaml', 'name: etl\nsteps:\n  - name: extract\n    command: extract.sh\n');
    write('other.yaml', dagYaml());
  });

  it('answers results per file with the DAG summary and each match', async () => {
    const res = await api().get('/api/v2/dags/search').query({ q: 'EXTRACT.sh' });
    expect(res.status).toBe(200);
    expect(SearchDagsResponse.parse(res.body)).toEqual({
      results: [
        {
          name: 'etl',
          dag: expect.objectContaining({ name: 'etl' }) as unknown,
          matches: [
            {
              line: 'steps:\n  - name: extract\n    command: extract.sh',
              lineNumber: 4,
              startLine: 2,
            },
          ],
        },
      ],
      errors: [],
    });
    const regex = SearchDagsResponse.parse(
      (await api().get('/api/v2/dags/search').query({ q: '/^name: e.l$/' })).body,
    );
    expect(regex.results.map((r) => r.name)).toEqual(['etl']);
  });

  it('answers 400 for a missing or empty q and an invalid regex', async () => {
    expectError(await api().get('/api/v2/dags/search'), 400, 'bad_request', /q: is required/);
    expectError(await api().get('/api/v2/dags/search?q='), 400, 'bad_request', /q: is required/);
    expectError(
      await api().get('/api/v2/dags/search').query({ q: '/(/' }),
      400,
      'bad_request',
      /regular expression/,
    );
  });
});

describe('GET /dags/tags', () => {
  it('answers unique sorted tags and unreadable files in errors', async () => {
    write('a.yaml', dagYaml('tags: [b, A]'));
    write('b.yaml', dagYaml('tags: [a]'));
    symlinkSync(join(dagsDir, 'loop.yaml'), join(dagsDir, 'loop.yaml'));
    const res = await api().get('/api/v2/dags/tags');
    expect(res.status).toBe(200);
    const body = DagTagsResponse.parse(res.body);
    expect(body.tags).toEqual(['a', 'b']);
    expect(body.errors).toEqual([expect.stringMatching(/^reading loop\.yaml failed: /)]);
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

  it('answers 400 without a spec', async () => {
    expectError(await api().post('/api/v2/dags/validate').send({}), 400, 'bad_request', /spec/);
  });
});

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

describe('DAG endpoint permissions', () => {
  /** A caller who may only read. */
  const viewer: Authenticator = {
    authenticate: () => ({ ok: true, principal: { name: 'vera', role: 'viewer' } }),
    can: (_p, permission) => permission === 'read',
  };

  it('answers 403 forbidden naming the action for every change, and lets reads and validate through', async () => {
    app = appWith(viewer);
    write('a.yaml', dagYaml());
    expectError(
      await api().post('/api/v2/dags').send({ name: 'b' }),
      403,
      'forbidden',
      /editing DAGs/,
    );
    expectError(await api().delete('/api/v2/dags/a'), 403, 'forbidden', /editing DAGs/);
    expectError(
      await api().put('/api/v2/dags/a/spec').send({ spec: dagYaml() }),
      403,
      'forbidden',
      /editing DAGs/,
    );
    expectError(
      await api().post('/api/v2/dags/a/rename').send({ newFileName: 'b' }),
      403,
      'forbidden',
    );
    expectError(
      await api().post('/api/v2/dags/a/suspend').send({ suspend: true }),
      403,
      'forbidden',
      /running DAGs/,
    );
    expect(files()).toEqual(['a.yaml']);
    for (const path of [
      '/api/v2/dags',
      '/api/v2/dags/a',
      '/api/v2/dags/a/spec',
      '/api/v2/dags/tags',
      '/api/v2/dags/search?q=s',
    ])
      expect((await api().get(path)).status, path).toBe(200);
    expect((await api().post('/api/v2/dags/validate').send({ spec: dagYaml() })).status).toBe(200);
  });
});
