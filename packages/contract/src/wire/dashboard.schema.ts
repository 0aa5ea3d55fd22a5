import { z } from 'zod';
import { queryInt } from './common.schema.js';
import { WorkerSchema } from '../worker/worker.schema.js';

/*
 * GET /dashboard (beyond the spec; docs/api.md, "Dashboard"): the web UI's home in one cheap
 * answer (runs of a time range, counts, queues, workers, next fires), refetched when the event
 * stream says something changed, never one request per DAG.
 */

/** Most runs the timeline gets; counts cover every run of the range. */
export const DASHBOARD_RUN_LIMIT = 1000;
/** Most next fires listed. */
export const DASHBOARD_NEXT_FIRES = 10;

/** `from` and `to` in Unix seconds (as GET /dag-runs' fromDate and toDate); default: today (UTC). */
export const DashboardQuery = z.object({
  from: queryInt(0)
    .optional()
    .describe('Start of the range, Unix seconds; default the start of today (UTC)'),
  to: queryInt(0).optional().describe('End of the range, Unix seconds; default 24 h after from'),
});

/** One run of the range, as the timeline draws it. */
const DashboardRunSchema = z.object({
  name: z.string(),
  dagRunId: z.string(),
  status: z.number().int().min(0).max(6),
  statusLabel: z.string(),
  queuedAt: z.string(),
  startedAt: z.string(),
  finishedAt: z.string(),
});

/** A queue's occupancy and the runs waiting in it. */
const DashboardQueueSchema = z.object({
  name: z.string(),
  type: z.enum(['custom', 'dag-based']),
  maxConcurrency: z.number().int().optional(),
  running: z.number().int(),
  queued: z.number().int(),
  waiting: z.array(z.object({ name: z.string(), dagRunId: z.string(), queuedAt: z.string() })),
});

/** A worker with its slots (distributed mode). */
const DashboardWorkerSchema = WorkerSchema.pick({
  id: true,
  health_status: true,
  last_heartbeat: true,
}).extend({
  slotsBusy: z.number().int(),
  /** Its last heartbeat's capacity; absent when the coordinator does not know it. */
  slotsTotal: z.number().int().optional(),
});

export const DashboardResponse = z.object({
  from: z.string().describe('Start of the range (ISO 8601, UTC)'),
  to: z.string().describe('End of the range (ISO 8601, UTC)'),
  /** Runs of the range by status label (every status, 0 when none). */
  counts: z.record(z.string(), z.number().int()),
  total: z.number().int(),
  /** Newest runs of the range, at most DASHBOARD_RUN_LIMIT. */
  runs: z.array(DashboardRunSchema),
  truncated: z.boolean().describe('True when the range holds more runs than `runs` lists'),
  queues: z.array(DashboardQueueSchema),
  workers: z.object({
    mode: z
      .enum(['embedded', 'distributed'])
      .describe('embedded: runs execute in the server process, there are no workers'),
    list: z.array(DashboardWorkerSchema),
  }),
  nextFires: z.array(z.object({ fileName: z.string(), name: z.string(), nextRun: z.string() })),
});

export type DashboardResponse = z.infer<typeof DashboardResponse>;
export type ApiDashboardRun = z.infer<typeof DashboardRunSchema>;
export type ApiDashboardQueue = z.infer<typeof DashboardQueueSchema>;
export type ApiDashboardWorker = z.infer<typeof DashboardWorkerSchema>;
