import { ListQueuesResponse } from '@trellis/contract';
import { defineRoutes } from '../http/define-routes.js';
import type { HttpDeps } from '../http/deps.js';
import { queueOccupancy } from '@trellis/services';
import { toApiRunSummary } from '../wire/run.mapper.js';

/**
 * GET /queues: every configured custom queue (even when empty), and every dag-based queue that
 * has running or queued runs; runs grouped by the queue they run through.
 */
export const queueRoutes = defineRoutes<HttpDeps>((r) => [
  r.get('/queues', {
    response: ListQueuesResponse,
    summary: 'Queues with their running and queued runs',
    handler: async (_in, deps) => {
      const queues = (await queueOccupancy(deps.reads, deps.queueConfig ?? [])).map((q) => ({
        name: q.name,
        type: q.type,
        ...(q.maxConcurrency !== undefined ? { maxConcurrency: q.maxConcurrency } : {}),
        summary: {
          running: q.running.length,
          queued: q.queued.length,
          total: q.running.length + q.queued.length,
        },
        runningDAGRuns: q.running.map((x) => toApiRunSummary(x)),
        queuedDAGRuns: q.queued.map((x) => toApiRunSummary(x)),
      }));
      return { status: 200, body: { queues } };
    },
  }),
]);
