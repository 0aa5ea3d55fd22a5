import { defineRoutes } from '../http/define-routes.js';
import type { HttpDeps } from '../http/deps.js';
import { paginate } from '../wire/paginate.js';
import {
  toApiDagDetailsResponse,
  toApiDagListItem,
  toApiSearchResult,
  toDagListQuery,
} from '../wire/dag.mapper.js';
import {
  RemoteNodeQuery,
  CreateDagBody,
  CreateDagResponse,
  DagDetailsResponse,
  DagFileParams,
  DagSpecResponse,
  DagTagsResponse,
  ListDagsQuery,
  ListDagsResponse,
  PutDagSpecBody,
  PutDagSpecResponse,
  RenameDagBody,
  SearchDagsQuery,
  SearchDagsResponse,
  SuspendDagBody,
  ValidateDagBody,
  ValidateDagResponse,
} from '@trellis/contract';
import { toApiDagDetails, toApiDagSummary } from '@trellis/spec';

/** DAG definitions (spec: Endpoints, DAG definitions); search and tags precede `/dags/:fileName`. */
// eslint-disable-next-line max-lines-per-function -- a declarative route table
export const dagRoutes = defineRoutes<HttpDeps>((r) => [
  r.get('/dags', {
    query: ListDagsQuery,
    response: ListDagsResponse,
    summary: 'List DAG files: filter by name or tag, sort by name or next run, paginate',
    handler: async ({ query }, deps) => {
      const { entries, errors, total } = await deps.dags.list(toDagListQuery(query));
      const pagination = paginate(total, query.page, query.perPage);
      return { status: 200, body: { dags: entries.map(toApiDagListItem), errors, pagination } };
    },
  }),
  r.post('/dags', {
    body: CreateDagBody,
    response: CreateDagResponse,
    permission: 'dags:write',
    summary: 'Create a DAG file from a spec (validated first), or a minimal one-step DAG',
    handler: async ({ body }, deps) => {
      await deps.dags.create(body.name, body.spec);
      return { status: 201, body: { name: body.name } };
    },
  }),
  r.get('/dags/search', {
    query: SearchDagsQuery,
    response: SearchDagsResponse,
    summary: 'Search DAG files for a case-insensitive text, or /regex/',
    handler: async ({ query }, deps) => {
      const { results, errors } = await deps.dags.search(query.q);
      return { status: 200, body: { results: results.map(toApiSearchResult), errors } };
    },
  }),
  r.get('/dags/tags', {
    query: RemoteNodeQuery,
    response: DagTagsResponse,
    summary: 'Every tag of the DAGs, once each, sorted',
    handler: async (_in, deps) => ({ status: 200, body: await deps.dags.tags() }),
  }),
  r.post('/dags/validate', {
    body: ValidateDagBody,
    response: ValidateDagResponse,
    summary: 'Validate a spec without storing it; problems come back with 200',
    handler: ({ body }, deps) => {
      const { valid, errors, dag } = deps.dags.validate(body.spec, body.name);
      const summary = dag ? { dag: toApiDagSummary(dag) } : {};
      return Promise.resolve({ status: 200, body: { valid, errors, ...summary } });
    },
  }),
  r.get('/dags/:fileName', {
    params: DagFileParams,
    response: DagDetailsResponse,
    summary: 'One DAG file: its DAG, the other DAGs of the file, latest run, suspension, problems',
    handler: async ({ params }, deps) => ({
      status: 200,
      body: toApiDagDetailsResponse(await deps.dags.get(params.fileName), deps.clock.now()),
    }),
  }),
  r.delete('/dags/:fileName', {
    params: DagFileParams,
    permission: 'dags:write',
    summary: 'Delete a DAG file (its run history stays)',
    handler: async ({ params }, deps) => {
      await deps.dags.delete(params.fileName);
      return { status: 204 };
    },
  }),
  r.get('/dags/:fileName/spec', {
    params: DagFileParams,
    response: DagSpecResponse,
    summary: 'The YAML text of a DAG file, its DAG and its problems',
    handler: async ({ params }, deps) => {
      const { dag, spec, errors } = await deps.dags.getSpec(params.fileName);
      return { status: 200, body: { dag: toApiDagDetails(dag), spec, errors } };
    },
  }),
  r.put('/dags/:fileName/spec', {
    params: DagFileParams,
    body: PutDagSpecBody,
    response: PutDagSpecResponse,
    permission: 'dags:write',
    summary:
      'Replace the YAML text of a DAG file; problems come back with 200 and nothing is written',
    handler: async ({ params, body }, deps) => ({
      status: 200,
      body: await deps.dags.putSpec(params.fileName, body.spec),
    }),
  }),
  r.post('/dags/:fileName/rename', {
    params: DagFileParams,
    body: RenameDagBody,
    permission: 'dags:write',
    summary: 'Rename a DAG file (its suspension moves with it)',
    handler: async ({ params, body }, deps) => {
      await deps.dags.rename(params.fileName, body.newFileName);
      return { status: 200 };
    },
  }),
  r.post('/dags/:fileName/suspend', {
    params: DagFileParams,
    body: SuspendDagBody,
    permission: 'runs:write',
    summary: 'Suspend (no scheduled runs) or resume a DAG',
    handler: async ({ params, body }, deps) => {
      await deps.dags.setSuspended(params.fileName, body.suspend);
      return { status: 200 };
    },
  }),
]);
