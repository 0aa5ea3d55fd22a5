import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { parseDagFile } from '@trellis/spec';
import { makeRunRecord } from '@trellis/testkit';
import { dagYaml, useDagRoutes } from '../support/dag-routes-fixture.js';
import { expectError } from '../support/expect-error.js';
import { DagTagsResponse, ListDagsResponse, SearchDagsResponse } from '@trellis/contract';

/** Listing, searching and tagging DAGs. */
const { api, write, dagsDir, latest } = useDagRoutes();

describe('GET /dags', () => {
  it('lists DAG files with the spec shape: summary, "not started" or latest run, suspension, errors', async () => {
    write(
      'etl.yaml',
      dagYaml('description: nightly\ntags: [ETL]\nschedule: "0 2 * * *"\nparams: DAY=today'),
    );
    write('report.yaml', dagYaml());
    latest().set('report', {
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
    symlinkSync(join(dagsDir(), 'loop.yaml'), join(dagsDir(), 'loop.yaml'));
    write('broken.yaml', 'steps: [');
    const res = await api().get('/api/v2/dags');
    expect(res.status).toBe(200);
    const body = ListDagsResponse.parse(res.body);
    expect(body.errors).toEqual([expect.stringMatching(/^reading loop\.yaml failed: /)]);
    expect(body.dags.map((d) => [d.fileName, d.errors.length > 0])).toEqual([['broken', true]]);
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
    symlinkSync(join(dagsDir(), 'loop.yaml'), join(dagsDir(), 'loop.yaml'));
    const res = await api().get('/api/v2/dags/tags');
    expect(res.status).toBe(200);
    const body = DagTagsResponse.parse(res.body);
    expect(body.tags).toEqual(['a', 'b']);
    expect(body.errors).toEqual([expect.stringMatching(/^reading loop\.yaml failed: /)]);
  });
});
