import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { DagListEntry, DagListQuery } from '@trellis/services';
import { parseDagFile, type ApiDagDetails, type ApiDagSummary } from '@trellis/spec';
import { toApiDagDetailsResponse, toApiDagListItem, toDagListQuery } from './dag.mapper.js';
import type { DagDetailsSchema, DagSummarySchema } from '@trellis/contract';
import { DagDetailsResponse, DagListItemSchema, ListDagsQuery } from '@trellis/contract';

const dag = parseDagFile('name: etl\ntags: [a]\nsteps:\n  - name: s\n    command: echo s\n').main
  .dag;

describe('DAG wire schemas', () => {
  it('infer exactly the spec package shapes', () => {
    expectTypeOf<z.infer<typeof DagSummarySchema>>().toEqualTypeOf<ApiDagSummary>();
    expectTypeOf<Omit<ApiDagDetails, 'steps'>>().toEqualTypeOf<
      Omit<z.infer<typeof DagDetailsSchema>, 'steps'>
    >();
    expectTypeOf(toDagListQuery).returns.toEqualTypeOf<DagListQuery>();
  });

  it('default the list query and keep absent filters absent', () => {
    const q = ListDagsQuery.parse({});
    expect(q).toEqual({ page: 1, perPage: 50, sort: 'name', order: 'asc' });
    expect(toDagListQuery(q)).toEqual({ page: 1, perPage: 50, sort: 'name', order: 'asc' });
    expect(toDagListQuery(ListDagsQuery.parse({ name: 'x', tag: 't', page: '2' }))).toMatchObject({
      name: 'x',
      tag: 't',
      page: 2,
    });
  });

  it('accept what the mappers produce', () => {
    const entry: DagListEntry = { fileName: 'etl', dag, errors: [], suspended: false };
    expect(DagListItemSchema.parse(toApiDagListItem(entry)).latestDAGRun).toMatchObject({
      dagRunId: '',
      name: 'etl',
      status: 0,
    });
    const details = toApiDagDetailsResponse(
      {
        fileName: 'etl',
        dag,
        localDags: [{ name: 'etl', dag, errors: [] }],
        errors: [],
        suspended: true,
      },
      new Date('2026-03-01T10:00:00Z'),
    );
    expect(DagDetailsResponse.parse(details)).toMatchObject({
      suspended: true,
      localDags: [{ name: 'etl' }],
      schedules: [],
    });
  });

  it('give each start schedule its zone and next fire times', () => {
    const nightly = parseDagFile(
      'name: nightly\nschedule: "CRON_TZ=Asia/Tokyo 30 2 * * *"\nsteps:\n  - echo s\n',
    ).main.dag;
    const details = toApiDagDetailsResponse(
      { fileName: 'nightly', dag: nightly, localDags: [], errors: [], suspended: false },
      new Date('2026-03-01T10:00:00Z'),
    );
    expect(DagDetailsResponse.parse(details).schedules).toEqual([
      {
        expression: 'CRON_TZ=Asia/Tokyo 30 2 * * *',
        cron: '30 2 * * *',
        timeZone: 'Asia/Tokyo',
        // 02:30 in Tokyo is 17:30 UTC the day before
        nextFires: [
          '2026-03-01T17:30:00.000Z',
          '2026-03-02T17:30:00.000Z',
          '2026-03-03T17:30:00.000Z',
        ],
      },
    ]);
  });
});
