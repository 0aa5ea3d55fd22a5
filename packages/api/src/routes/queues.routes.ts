import { RunStatus } from '@trellis/core';
import { ListQueuesResponse } from '@trellis/contract';
import { defineRoutes } from '../http/define-routes.js';
import type { HttpDeps } from '../http/deps.js';
import type { RunSummaryRecord } from '../http/run-queries.js';
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
      const [running, queued] = await Promise.all([
        deps.runQueries.listRuns({ status: RunStatus.Running }),
        deps.runQueries.listRuns({ status: RunStatus.Queued }),
      ]);
      const custom = new Map((deps.queueConfig ?? []).map((q) => [q.name, q.maxConcurrency]));
      const groups = new Map<string, { running: RunSummaryRecord[]; queued: RunSummaryRecord[] }>();
      for (const name of custom.keys()) groups.set(name, { running: [], queued: [] });
      const add = (run: RunSummaryRecord, kind: 'running' | 'queued'): void => {
        const name = run.queue || run.name;
        const g = groups.get(name) ?? { running: [], queued: [] };
        g[kind].push(run);
        groups.set(name, g);
      };
      running.forEach((x) => add(x, 'running'));
      queued.forEach((x) => add(x, 'queued'));
      const queues = [...groups.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, g]) => ({
          name,
          type: custom.has(name) ? ('custom' as const) : ('dag-based' as const),
          ...(custom.has(name) ? { maxConcurrency: custom.get(name) ?? 1 } : {}),
          summary: {
            running: g.running.length,
            queued: g.queued.length,
            total: g.running.length + g.queued.length,
          },
          runningDAGRuns: g.running.map((x) => toApiRunSummary(x)),
          // FIFO: oldest queued first
          queuedDAGRuns: [...g.queued].reverse().map((x) => toApiRunSummary(x)),
        }));
      return { status: 200, body: { queues } };
    },
  }),
]);
