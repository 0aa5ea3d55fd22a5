import type { z } from 'zod';
import type { DagDetails, DagListEntry, DagListQuery, DagSearchResult } from '@trellis/services';
import {
  nextFireOf,
  toApiDagDetails,
  toApiDagSummary,
  type ApiDagSummary,
  type Dag,
} from '@trellis/spec';
import type { DagListItemSchema, ListDagsQuery, SearchResultSchema } from '@trellis/contract';
import { toApiRunSummary } from './run.mapper.js';

/**
 * The API summary of a DAG, made once per parsed DAG: a watched store hands out the same DAG
 * object until its file changes, so a list of 1,000 DAGs maps none of them again.
 */
const summaries = new WeakMap<Dag, ApiDagSummary>();
const summaryOf = (dag: Dag): ApiDagSummary => {
  let s = summaries.get(dag);
  if (s === undefined) summaries.set(dag, (s = toApiDagSummary(dag)));
  return s;
};

/** The service query of GET /dags (absent filters stay absent). */
export const toDagListQuery = (q: z.infer<typeof ListDagsQuery>): DagListQuery => ({
  page: q.page,
  perPage: q.perPage,
  sort: q.sort,
  order: q.order,
  ...(q.name !== undefined ? { name: q.name } : {}),
  ...(q.tag !== undefined ? { tag: q.tag } : {}),
});

/** A DAG list item; a DAG that never ran gets the "not started" run summary. */
export const toApiDagListItem = (e: DagListEntry): z.infer<typeof DagListItemSchema> => ({
  fileName: e.fileName,
  dag: summaryOf(e.dag),
  latestDAGRun: toApiRunSummary(e.latestRun, e.dag.name),
  suspended: e.suspended,
  errors: [...e.errors],
  nextRun: e.nextRun?.toISOString() ?? '',
});

/** How many next fire times a schedule entry shows. */
const NEXT_FIRES = 3;

/** The start schedules with their zone (the server's when none is set) and next fire times. */
const toScheduleFires = (dag: Dag, now: Date) => {
  const serverZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return dag.schedule.start.map((e) => {
    const nextFires: string[] = [];
    let after = now;
    for (let i = 0; i < NEXT_FIRES; i++) {
      const next = nextFireOf(e, after);
      if (!next) break;
      nextFires.push(next.toISOString());
      after = next;
    }
    return {
      expression: e.expression,
      cron: e.cron,
      timeZone: e.timezone ?? serverZone,
      nextFires,
    };
  });
};

/**
 * The single-DAG response (spec: DAG details), shaped as DagDetailsResponse. Its type comes from
 * the spec package's ApiDagDetails: the step schema is open (passthrough), ApiStep is closed.
 * `schedules` (beyond the spec) has the next fire times after `now`.
 */
export const toApiDagDetailsResponse = (d: DagDetails, now: Date) => ({
  dag: toApiDagDetails(d.dag),
  localDags: d.localDags.map((l) => ({
    name: l.name,
    dag: toApiDagDetails(l.dag),
    errors: [...l.errors],
  })),
  latestDAGRun: toApiRunSummary(d.latestRun, d.dag.name),
  suspended: d.suspended,
  errors: [...d.errors],
  schedules: toScheduleFires(d.dag, now),
});

/** A search result (spec: Search result). */
export const toApiSearchResult = (r: DagSearchResult): z.infer<typeof SearchResultSchema> => ({
  name: r.name,
  dag: summaryOf(r.dag),
  matches: r.matches.map((m) => ({
    line: m.line,
    lineNumber: m.lineNumber,
    startLine: m.startLine,
  })),
});
