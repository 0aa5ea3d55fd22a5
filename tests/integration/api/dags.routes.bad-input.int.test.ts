import { describe, expect, it } from 'vitest';
import { DagTagsResponse, SearchDagsResponse } from '@trellis/contract';
import { dagYaml, useDagRoutes } from '../support/dag-routes-fixture.js';
import { expectError } from '../support/expect-error.js';

/** Input that used to answer 500 or stall the server (issue #15, items 7 and 8). */
const { api, write } = useDagRoutes();

describe('bad input on the DAG endpoints', () => {
  it('answers 400 naming the limit for a fileName longer than a file name may be', async () => {
    const long = 'a'.repeat(300);
    for (const res of [
      await api().get(`/api/v2/dags/${long}`),
      await api().get(`/api/v2/dags/${long}/spec`),
      await api().delete(`/api/v2/dags/${long}`),
      await api().post('/api/v2/dags/a/rename').send({ newFileName: long }),
    ])
      expectError(res, 400, 'bad_request', /at most 250 characters/);
    // 250 is allowed: the DAG is simply not there
    expectError(await api().get(`/api/v2/dags/${'a'.repeat(250)}`), 404, 'not_found');
  });

  it('answers 400 for a path with an undecodable % sequence', async () => {
    for (const path of ['/api/v2/dags/%ZZ', '/api/v2/dags/a%E0%A4%A/spec', '/api/v2/dags/%C0%AF'])
      expectError(await api().get(path), 400, 'bad_request', /malformed path: .*%25/);
  });

  it('searches with a regex that backtracks exponentially in JavaScript, and refuses one RE2 cannot run', async () => {
    write('a.yaml', dagYaml(`description: ${'a'.repeat(5_000)}!`));
    const res = await api().get('/api/v2/dags/search').query({ q: '/(a+)+$/' });
    expect(res.status).toBe(200);
    expect(SearchDagsResponse.parse(res.body)).toEqual({ results: [], errors: [] });
    expectError(
      await api().get('/api/v2/dags/search').query({ q: '/(a)\\1/' }),
      400,
      'bad_request',
      /RE2/,
    );
  });

  it('names a DAG file that cannot be read in the errors of GET /dags/tags', async () => {
    write('a.yaml', dagYaml('tags: [etl]'));
    write('broken.yaml', 'tags: [lost\nsteps: [\n');
    const res = await api().get('/api/v2/dags/tags');
    expect(res.status).toBe(200);
    const body = DagTagsResponse.parse(res.body);
    expect(body.tags).toEqual(['etl']);
    expect(body.errors).toEqual([expect.stringMatching(/^broken\.yaml: /)]);
  });
});
