import { AppError, ErrorCode, RunStatus, runStatusLabel } from '@trellis/core';
import {
  DASHBOARD_NEXT_FIRES,
  DASHBOARD_RUN_LIMIT,
  DashboardQuery,
  DashboardResponse,
  type ApiDashboardQueue,
  type ApiDashboardWorker,
} from '@trellis/contract';
import { queueOccupancy } from '@trellis/services';
import { defineRoutes } from '../http/define-routes.js';
import type { HttpDeps } from '../http/deps.js';
import { toApiWorker } from '../wire/worker.mapper.js';
import { nextFires } from './dag-names.js';

const DAY_MS = 86_400_000;
/**
 * The run indexes in memory serve the dashboard when read from disk less than this long ago:
 * this process's runs show at once, another process's (a `trellis start` beside the server)
 * within a second, as in the DAG list; 1,000 DAGs' indexes are not stat'ed per request.
 */
const STALE_MS = 1000;

/** The range in ms: default today (UTC); 400 naming both values when `to` is before `from`. */
const rangeOf = (
  q: { from?: number | undefined; to?: number | undefined },
  nowMs: number,
): [number, number] => {
  const from = q.from !== undefined ? q.from * 1000 : Math.floor(nowMs / DAY_MS) * DAY_MS;
  const to = q.to !== undefined ? q.to * 1000 + 999 : from + DAY_MS - 1;
  if (to < from)
    throw new AppError(
      ErrorCode.BadRequest,
      `invalid query: to (${q.to}) is before from (${q.from ?? from / 1000}): give to >= from`,
      { from: q.from, to: q.to },
    );
  return [from, to];
};

const queuesOf = async (deps: HttpDeps): Promise<ApiDashboardQueue[]> =>
  (await queueOccupancy(deps.reads, deps.queueConfig ?? [], STALE_MS)).map((q) => ({
    name: q.name,
    type: q.type,
    ...(q.maxConcurrency !== undefined ? { maxConcurrency: q.maxConcurrency } : {}),
    running: q.running.length,
    queued: q.queued.length,
    waiting: q.queued.map((r) => ({ name: r.name, dagRunId: r.dagRunId, queuedAt: r.queuedAt })),
  }));

const workersOf = (deps: HttpDeps): ApiDashboardWorker[] =>
  (deps.workers?.() ?? []).map((w) => {
    const api = toApiWorker(w);
    return {
      id: api.id,
      health_status: api.health_status,
      last_heartbeat: api.last_heartbeat,
      slotsBusy: w.runningTasks.length,
      ...(w.capacity !== undefined ? { slotsTotal: w.capacity } : {}),
    };
  });

/** GET /dashboard (beyond the spec; docs/api.md, "Dashboard"): the web UI's home in one answer. */
export const dashboardRoutes = defineRoutes<HttpDeps>((r) => [
  r.get('/dashboard', {
    query: DashboardQuery,
    response: DashboardResponse,
    summary:
      "The dashboard in one answer: a range's runs (default today, UTC) and counts by status, queue occupancy, workers and slots, the scheduler's next fires",
    handler: async ({ query }, deps) => {
      const [from, to] = rangeOf(query, deps.clock.now().getTime());
      const all = await deps.reads.list({ fromMs: from, toMs: to, maxStaleMs: STALE_MS });
      const counts: Record<string, number> = {};
      for (const s of Object.values(RunStatus)) counts[runStatusLabel[s]] = 0;
      for (const x of all)
        counts[runStatusLabel[x.status]] = (counts[runStatusLabel[x.status]] ?? 0) + 1;
      const [queues, fires] = await Promise.all([
        queuesOf(deps),
        nextFires(deps, DASHBOARD_NEXT_FIRES),
      ]);
      return {
        status: 200,
        body: {
          from: new Date(from).toISOString(),
          to: new Date(to).toISOString(),
          counts,
          total: all.length,
          runs: all.slice(0, DASHBOARD_RUN_LIMIT).map((x) => ({
            name: x.name,
            dagRunId: x.dagRunId,
            status: x.status,
            statusLabel: runStatusLabel[x.status],
            queuedAt: x.queuedAt,
            startedAt: x.startedAt,
            finishedAt: x.finishedAt,
          })),
          truncated: all.length > DASHBOARD_RUN_LIMIT,
          queues,
          workers: { mode: deps.workers ? 'distributed' : 'embedded', list: workersOf(deps) },
          nextFires: fires,
        },
      };
    },
  }),
]);
