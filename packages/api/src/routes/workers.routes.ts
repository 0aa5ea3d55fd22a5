import { z } from 'zod';
import { AppError, ErrorCode } from '@trellis/core';
import { WorkerPath, WorkerSchema } from '@trellis/contract';
import { defineRoutes } from '../http/define-routes.js';
import type { HttpDeps } from '../http/deps.js';
import { toApiWorker } from '../wire/worker.mapper.js';

const ACTIONS = [
  ['cordon', 'cordoned', 'Cordon a worker: it takes no new runs; running ones go on'],
  ['uncordon', 'active', 'Uncordon a worker: it takes runs again'],
  [
    'drain',
    'draining',
    'Drain a worker: it takes no new runs, lets running ones finish, then exits',
  ],
] as const;

/**
 * Beside the spec's GET /workers (issue 19): an admin cordons, drains or uncordons a worker of
 * the fleet. Answers the worker after the change: 200 when applied by this coordinator, 202 when
 * handed on to the coordinator the worker is connected to (docs/decisions.md); 404 for a worker
 * no coordinator knows; 503 while the hand-on cannot go through Redis.
 */
export const workerRoutes = defineRoutes<HttpDeps>((r) =>
  ACTIONS.map(([action, state, summary]) =>
    r.post(`/workers/:id/${action}`, {
      params: WorkerPath,
      body: z.object({}).optional(),
      response: WorkerSchema,
      permission: 'workers:admin',
      summary,
      handler: async ({ params }, deps) => {
        if (!deps.setWorkerState)
          throw new AppError(
            ErrorCode.ServiceUnavailable,
            'no coordinator is running: workers exist in distributed mode (set SVC_REDIS_URL)',
          );
        const change = await deps.setWorkerState(params.id, state);
        if (change === undefined)
          throw new AppError(
            ErrorCode.NotFound,
            `worker ${JSON.stringify(params.id)} is known to no coordinator: see GET /api/v2/workers for the ids`,
          );
        return { status: change.handedOn ? 202 : 200, body: toApiWorker(change.worker) };
      },
    }),
  ),
);
