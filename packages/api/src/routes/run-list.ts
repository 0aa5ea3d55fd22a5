import type { z } from 'zod';
import type { RunStatus } from '@trellis/core';
import type { RunListQuery } from '@trellis/contract';
import type { Dag } from '@trellis/spec';
import type { HttpDeps } from '../http/deps.js';
import { dagRunsBody, DagRunsBodyCache } from '../wire/dag-runs-body.js';
import { ListingBodyCache } from '../wire/listing-body-cache.js';
import { paginate } from '../wire/paginate.js';
import type { ListingBody } from '../wire/run-summary-json.js';
import { dagNamesTagged } from './dag-names.js';

/** One `T` per app (its `HttpDeps`), made at its first use. */
const perApp = <T extends object>(make: () => T): ((deps: HttpDeps) => T) => {
  const made = new WeakMap<HttpDeps, T>();
  return (deps) => {
    let c = made.get(deps);
    if (c === undefined) made.set(deps, (c = make()));
    return c;
  };
};

/** Each app's kept listing bodies (bounded: listing-body-cache.ts). */
const listingsOf = perApp(() => new ListingBodyCache());

/** GET /dag-runs and GET /dag-runs/{name}: the listing's JSON body, kept while unchanged. */
export const runList = async (deps: HttpDeps, q: z.infer<typeof RunListQuery>, name?: string) => {
  const filter = {
    ...(q.tag !== undefined && q.tag !== '' ? { names: await dagNamesTagged(deps, q.tag) } : {}),
    ...(q.worker !== undefined && q.worker !== '' ? { workerId: q.worker } : {}),
    ...(name !== undefined ? { name } : q.name !== undefined ? { name: q.name } : {}),
    ...(q.status !== undefined ? { status: q.status as RunStatus } : {}),
    ...(q.fromDate !== undefined ? { fromMs: q.fromDate * 1000 } : {}),
    ...(q.toDate !== undefined ? { toMs: q.toDate * 1000 } : {}),
    ...(q.dagRunId !== undefined ? { dagRunIdContains: q.dagRunId } : {}),
  };
  const runs = await deps.reads.list(filter);
  // The body as bytes, the same bytes `res.json({ dagRuns, pagination })` would send: each
  // summary's JSON is made once per summary (run-summary-json.ts), and the whole body is kept
  // and answered again while the listing holds the same summaries (listing-body-cache.ts).
  const key = `${JSON.stringify(filter)} ${q.page} ${q.perPage}`;
  const cache = listingsOf(deps);
  if (q.page === undefined && q.perPage === undefined)
    return jsonText(cache.body(key, '{"dagRuns":', runs, '}'));
  const page = q.page ?? 1;
  const perPage = q.perPage ?? 50;
  const slice = runs.slice((page - 1) * perPage, page * perPage);
  const pagination = JSON.stringify(paginate(runs.length, page, perPage));
  return jsonText(cache.body(key, '{"dagRuns":', slice, `,"pagination":${pagination}}`));
};

/** Each app's kept GET /dags/{fileName}/dag-runs answers (bounded: dag-runs-body.ts). */
const dagRunsOf = perApp(() => new DagRunsBodyCache());

/**
 * GET /dags/{fileName}/dag-runs: the DAG's recent runs (newest first, at most 30) and their
 * grid, the bytes `res.json` would send. The DAG's change stamp is taken before the records are
 * read, and the answer kept under it: while the stamp stays the same, no record of the DAG's
 * runs was written by any process, and the kept answer is answered again.
 */
export const dagRunsAnswer = async (deps: HttpDeps, fileName: string, dag: Dag) => {
  const cache = dagRunsOf(deps);
  const stepOrder = dag.steps.map((st) => st.name);
  const key = { stamp: await deps.reads.changeStamp(dag.name), dagName: dag.name, stepOrder };
  const kept = cache.get(fileName, key);
  if (kept !== undefined) return jsonText(kept);
  const runs = await deps.reads.recent(dag.name, 30);
  return jsonText(cache.put(fileName, key, dagRunsBody(stepOrder, runs)));
};

/** A 200 answer whose JSON body is already text. */
const jsonText = ({ body, etag }: ListingBody) => ({
  status: 200,
  text: { contentType: 'application/json; charset=utf-8', body, etag },
});
