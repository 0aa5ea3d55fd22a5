import { z } from 'zod';
import { AppError, ErrorCode } from '@trellis/core';
import type { StartedRun } from '@trellis/services';
import { defineRoutes } from '../http/define-routes.js';
import type { HttpDeps } from '../http/deps.js';
import {
  ChildRunPath,
  ChildStepPath,
  DagName,
  DagRunsResponse,
  EnqueueRunBody,
  FileName,
  IdempotencyKeyHeaders,
  InlineRunBody,
  ListWorkersResponse,
  LogChunkSchema,
  RunLogQuery,
  Pagination,
  RunDetailsQuery,
  RunDetailsSchema,
  RunId,
  RunListQuery,
  RunPath,
  RunSummarySchema,
  StartRunBody,
  StepStatusBody,
  StepLogQuery,
  StepPath,
  TriggerRunResponse,
} from '@trellis/contract';
import type { Dag } from '@trellis/spec';
import { dagRunsAnswer, runList } from './run-list.js';
import { idempotently, withRunId } from './idempotent-trigger.js';
import { findOrWait } from './run-wait.js';
import { checkRunConfig } from './run-config.js';
import { noWorkerReasonOf, waitReasonOf } from './wait-reason.js';
import { toApiRunDetails } from '../wire/run.mapper.js';
import { toApiWorker } from '../wire/worker.mapper.js';

const window = (q: z.infer<typeof RunLogQuery>) => ({
  ...(q.tail !== undefined ? { tail: q.tail } : {}),
  ...(q.head !== undefined ? { head: q.head } : {}),
  ...(q.offset !== undefined ? { offset: q.offset } : {}),
  ...(q.limit !== undefined ? { limit: q.limit } : {}),
});

/**
 * The answer to a start, retry or inline run: `{dagRunId}` (the run is running on disk by then);
 * the run goes on in this process, and a failure to finish it is a bug worth a log line.
 */
const answerStarted = (deps: HttpDeps, started: StartedRun) => {
  started.done.catch((e: unknown) =>
    deps.log.error(`run ${started.record.dagRunId} failed to finish`, e),
  );
  return { status: 200, body: { dagRunId: started.record.dagRunId } };
};

/**
 * A start's or enqueue's answer with the run it created, for the idempotency journal; it says why
 * the run waits when no live worker matches its DAG's workerSelector.
 */
const keyed = async (deps: HttpDeps, dag: Dag, started: StartedRun) => {
  const answer = answerStarted(deps, started);
  const reason = await noWorkerReasonOf(deps, dag, started);
  return {
    name: started.record.name,
    dagRunId: started.record.dagRunId,
    answer: { ...answer, body: { ...answer.body, ...reason } },
  };
};

/** POST /dags/{fileName}/start without its idempotency. */
const startRun = async (deps: HttpDeps, fileName: string, body: z.infer<typeof StartRunBody>) => {
  const loaded = await deps.dags.load(fileName);
  checkRunConfig(loaded.dag, body);
  const started = await deps.runs.startLoaded(loaded.dag, loaded.localDags, {
    ...(body.params !== undefined ? { params: body.params } : {}),
    ...(body.dagRunId !== undefined ? { dagRunId: body.dagRunId } : {}),
    ...(body.singleton !== undefined ? { singleton: body.singleton } : {}),
  });
  return keyed(deps, loaded.dag, started);
};

/** POST /dags/{fileName}/enqueue without its idempotency. */
const enqueueRun = async (
  deps: HttpDeps,
  fileName: string,
  body: z.infer<typeof EnqueueRunBody>,
) => {
  const loaded = await deps.dags.load(fileName);
  checkRunConfig(loaded.dag, body);
  const started = await deps.runs.enqueue(loaded.dag, loaded.localDags, {
    ...(body.params !== undefined ? { params: body.params } : {}),
    ...(body.dagRunId !== undefined ? { dagRunId: body.dagRunId } : {}),
    ...(body.queue !== undefined ? { queue: body.queue } : {}),
  });
  return keyed(deps, loaded.dag, started);
};

/** DAG runs (spec: Endpoints, DAG runs; and the run endpoints under /dags/{fileName}). */
// eslint-disable-next-line max-lines-per-function -- a declarative route table
export const runRoutes = defineRoutes<HttpDeps>((r) => [
  r.post('/dags/:fileName/start', {
    params: z.object({ fileName: FileName }),
    body: StartRunBody,
    headers: IdempotencyKeyHeaders,
    response: TriggerRunResponse,
    permission: 'runs:write',
    summary: 'Start a run of the DAG now (idempotent with an Idempotency-Key header)',
    handler: async ({ params, body, headers, res }, deps) =>
      idempotently(
        deps,
        headers['Idempotency-Key'],
        { request: `POST /dags/${params.fileName}/start`, payload: body, res, ...params },
        (id) => startRun(deps, params.fileName, withRunId(body, id)),
      ),
  }),
  r.post('/dags/:fileName/enqueue', {
    params: z.object({ fileName: FileName }),
    body: EnqueueRunBody,
    headers: IdempotencyKeyHeaders,
    response: TriggerRunResponse,
    permission: 'runs:write',
    summary:
      "Put a run of the DAG on its queue (or the body's queue); it starts in its turn (idempotent with an Idempotency-Key header)",
    handler: async ({ params, body, headers, res }, deps) =>
      idempotently(
        deps,
        headers['Idempotency-Key'],
        { request: `POST /dags/${params.fileName}/enqueue`, payload: body, res, ...params },
        (id) => enqueueRun(deps, params.fileName, withRunId(body, id)),
      ),
  }),
  r.post('/dags/:fileName/stop-all', {
    params: z.object({ fileName: FileName }),
    response: z.object({ errors: z.array(z.string()) }),
    permission: 'runs:write',
    summary: 'Stop every running run of the DAG',
    handler: async ({ params }, deps) => {
      const loaded = await deps.dags.load(params.fileName);
      return { status: 200, body: { errors: await deps.runs.stopAll(loaded.dag.name) } };
    },
  }),
  r.get('/dags/:fileName/dag-runs', {
    params: z.object({ fileName: FileName }),
    response: DagRunsResponse,
    summary: "The DAG's recent runs (newest first, at most 30) and the run history grid",
    handler: async ({ params }, deps) => {
      // the file's DAG only: `get` would also read the latest run, which this answer lists
      const details = await deps.dags.getSpec(params.fileName);
      return dagRunsAnswer(deps, params.fileName, details.dag);
    },
  }),
  r.get('/dags/:fileName/dag-runs/:dagRunId', {
    params: z.object({ fileName: FileName, dagRunId: RunId }),
    response: z.object({ dagRun: RunDetailsSchema }),
    summary: 'One run of the DAG (`latest` for the most recent)',
    handler: async ({ params }, deps) => {
      const details = await deps.dags.get(params.fileName);
      const run = await deps.reads.find({ name: details.dag.name, dagRunId: params.dagRunId });
      const reason = await waitReasonOf(deps, run, params.fileName);
      return { status: 200, body: { dagRun: { ...toApiRunDetails(run), ...reason } } };
    },
  }),
  r.post('/dag-runs', {
    body: InlineRunBody,
    response: z.object({ dagRunId: z.string() }),
    permission: 'runs:write',
    summary:
      'Create and start a run from an inline YAML spec (field `spec`) without storing a DAG file',
    handler: async ({ body }, deps) => {
      const started = await deps.runs.startSpec({
        spec: body.spec,
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.params !== undefined ? { params: body.params } : {}),
        ...(body.dagRunId !== undefined ? { dagRunId: body.dagRunId } : {}),
        ...(body.singleton !== undefined ? { singleton: body.singleton } : {}),
      });
      return answerStarted(deps, started);
    },
  }),
  r.get('/dag-runs', {
    query: RunListQuery,
    response: z.object({ dagRuns: z.array(RunSummarySchema), pagination: Pagination.optional() }),
    summary: 'Runs, newest first; paginated only when page or perPage is given',
    handler: async ({ query }, deps) => runList(deps, query),
  }),
  r.get('/dag-runs/:name', {
    params: z.object({ name: DagName }),
    query: RunListQuery.omit({ name: true }),
    response: z.object({ dagRuns: z.array(RunSummarySchema), pagination: Pagination.optional() }),
    summary: 'Runs of one DAG, newest first',
    handler: async ({ params, query }, deps) => runList(deps, query, params.name),
  }),
  r.get('/dag-runs/:name/:dagRunId', {
    params: RunPath,
    query: RunDetailsQuery,
    response: z.object({ dagRunDetails: RunDetailsSchema }),
    summary:
      'One run (`latest` for the most recent); with waitFor=final, answers once the run is final or at the timeout',
    handler: async ({ params, query, res }, deps) => {
      const run = await findOrWait(deps, params, query, res);
      const reason = await waitReasonOf(deps, run);
      return { status: 200, body: { dagRunDetails: { ...toApiRunDetails(run), ...reason } } };
    },
  }),
  r.post('/dag-runs/:name/:dagRunId/stop', {
    params: RunPath,
    response: z.object({}),
    permission: 'runs:write',
    summary: 'Stop a running run (asynchronous: it ends cancelled)',
    handler: async ({ params }, deps) => {
      await deps.runs.stop(params);
      return { status: 200, body: {} };
    },
  }),
  r.post('/dag-runs/:name/:dagRunId/retry', {
    params: RunPath,
    body: z.object({ dagRunId: RunId.optional() }),
    response: z.object({ dagRunId: z.string() }),
    permission: 'runs:write',
    statusFor: { already_running: 400 },
    summary:
      "Retry as a new run (the body's dagRunId, generated when absent); succeeded steps keep their result",
    handler: async ({ params, body }, deps) => {
      const started = await deps.runs.retry(
        params,
        body.dagRunId !== undefined ? { newRunId: body.dagRunId } : {},
      );
      return answerStarted(deps, started);
    },
  }),
  r.get('/dag-runs/:name/:dagRunId/dequeue', {
    params: RunPath,
    response: z.object({}),
    permission: 'runs:write',
    summary: 'Take a queued run off its queue (it ends cancelled); 404 when it is not queued',
    handler: async ({ params }, deps) => {
      await deps.runs.dequeue(params);
      return { status: 200, body: {} };
    },
  }),
  r.get('/dag-runs/:name/:dagRunId/log', {
    params: RunPath,
    query: RunLogQuery,
    response: LogChunkSchema,
    summary: 'The run log',
    handler: async ({ params, query }, deps) => {
      return {
        status: 200,
        body: await deps.reads.runLog(await deps.reads.find(params), window(query)),
      };
    },
  }),
  r.get('/dag-runs/:name/:dagRunId/steps/:stepName/log', {
    params: StepPath,
    query: StepLogQuery,
    response: LogChunkSchema,
    summary: "A step's stdout (default) or stderr log",
    handler: async ({ params, query }, deps) => ({
      status: 200,
      body: await deps.reads.stepLog(
        await deps.reads.find(params),
        params.stepName,
        query.stream,
        window(query),
      ),
    }),
  }),
  r.patch('/dag-runs/:name/:dagRunId/steps/:stepName/status', {
    params: StepPath,
    body: StepStatusBody,
    response: z.object({}),
    permission: 'runs:write',
    summary: "Set a step's status (0-5) in a run that is not running",
    handler: async ({ params, body }, deps) => {
      const run = await deps.reads.find(params);
      await deps.runs.setStepStatus(
        { name: run.name, dagRunId: run.dagRunId },
        params.stepName,
        body.status as 0 | 1 | 2 | 3 | 4 | 5,
      );
      return { status: 200, body: {} };
    },
  }),
  r.get('/dag-runs/:name/:dagRunId/children/:childDAGRunId', {
    params: ChildRunPath,
    response: z.object({ dagRunDetails: RunDetailsSchema }),
    summary: 'A child run under the root run',
    handler: async ({ params }, deps) => {
      const { child } = await deps.reads.childOf(params);
      return { status: 200, body: { dagRunDetails: toApiRunDetails(child) } };
    },
  }),
  r.get('/dag-runs/:name/:dagRunId/children/:childDAGRunId/log', {
    params: ChildRunPath,
    query: RunLogQuery,
    response: LogChunkSchema,
    summary: "A child run's log",
    handler: async ({ params, query }, deps) => {
      const { child } = await deps.reads.childOf(params);
      return { status: 200, body: await deps.reads.runLog(child, window(query)) };
    },
  }),
  r.get('/dag-runs/:name/:dagRunId/children/:childDAGRunId/steps/:stepName/log', {
    params: ChildStepPath,
    query: StepLogQuery,
    response: LogChunkSchema,
    summary: "A child run's step log",
    handler: async ({ params, query }, deps) => {
      const { child } = await deps.reads.childOf(params);
      return {
        status: 200,
        body: await deps.reads.stepLog(child, params.stepName, query.stream, window(query)),
      };
    },
  }),
  r.patch('/dag-runs/:name/:dagRunId/children/:childDAGRunId/steps/:stepName/status', {
    params: ChildStepPath,
    body: StepStatusBody,
    response: z.object({}),
    permission: 'runs:write',
    summary: "Set a step's status in a child run",
    handler: async ({ params, body }, deps) => {
      const { root: rootRef, child } = await deps.reads.childOf(params);
      await deps.runs.setStepStatus(
        { name: child.name, dagRunId: child.dagRunId },
        params.stepName,
        body.status as 0 | 1 | 2 | 3 | 4 | 5,
        rootRef,
      );
      return { status: 200, body: {} };
    },
  }),
  r.get('/workers', {
    query: z.object({ remoteNode: z.string().optional() }),
    response: ListWorkersResponse,
    summary: 'Workers tracked by the coordinator (distributed mode)',
    handler: (_req, deps) => {
      if (!deps.workers)
        throw new AppError(
          ErrorCode.ServiceUnavailable,
          'no coordinator is running: workers exist in distributed mode (set SVC_REDIS_URL)',
        );
      return Promise.resolve({ status: 200, body: { workers: deps.workers().map(toApiWorker) } });
    },
  }),
]);
