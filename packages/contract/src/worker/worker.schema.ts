import { z } from 'zod';
import { WORKER_HEALTH_STATUS } from './worker-health.js';

/** A run a worker reports as executing (spec: Worker `running_tasks` item). */
export const RunningTaskSchema = z.object({
  dagName: z.string(),
  dagRunId: z.string(),
  rootDagRunName: z.string(),
  rootDagRunId: z.string(),
  /** `''` for a top-level run. */
  parentDagRunName: z.string(),
  parentDagRunId: z.string(),
  startedAt: z.string(),
});

/** Spec: Worker object (snake_case on the wire). */
export const WorkerSchema = z.object({
  id: z.string(),
  labels: z.record(z.string(), z.string()),
  health_status: z.enum([
    WORKER_HEALTH_STATUS.healthy,
    WORKER_HEALTH_STATUS.warning,
    WORKER_HEALTH_STATUS.unhealthy,
  ]),
  last_heartbeat: z.string(),
  running_tasks: z.array(RunningTaskSchema),
  // Beside the spec's fields (issue 19): what the worker says of itself, and its state. Always
  // sent by this server; optional so that a client reads an older server's answer too.
  /** The worker's Trellis version ('' from a worker that does not say). */
  version: z.string().optional(),
  /** Host name of the worker. */
  host: z.string().optional(),
  /** When the worker process started (RFC 3339; '' when unsaid). */
  started_at: z.string().optional(),
  /** Runs it executes at once, at most. */
  slots_total: z.int().optional(),
  /** Top-level runs it executes now. */
  slots_busy: z.int().optional(),
  /** `active`, `draining` (finishing its runs, then it exits) or `cordoned` (no new runs). */
  state: z.enum(['active', 'draining', 'cordoned']).optional(),
});

/** POST /workers/{id}/cordon|uncordon|drain path. */
export const WorkerPath = z.object({ id: z.string().min(1) });

/** GET /workers response. */
export const ListWorkersResponse = z.object({ workers: z.array(WorkerSchema) });

/** A running task: the same fields in the coordinator's registry and on the wire. */
export type RunningTask = Readonly<z.infer<typeof RunningTaskSchema>>;
export type ApiWorker = z.infer<typeof WorkerSchema>;
export type ListWorkersResponse = z.infer<typeof ListWorkersResponse>;
