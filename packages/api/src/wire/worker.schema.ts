import { z } from 'zod';

/** A worker as the coordinator's registry has it (domain form: camelCase, `Date`). */
export interface WorkerInfo {
  readonly id: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly health: 'healthy' | 'warning' | 'unhealthy';
  readonly lastHeartbeat: Date;
  readonly runningTasks: readonly {
    readonly dagName: string;
    readonly dagRunId: string;
    readonly rootDagRunName: string;
    readonly rootDagRunId: string;
    readonly parentDagRunName: string;
    readonly parentDagRunId: string;
    readonly startedAt: string;
  }[];
}

/** Spec: Worker `running_tasks` item. */
export const RunningTaskSchema = z.object({
  dagName: z.string(),
  dagRunId: z.string(),
  rootDagRunName: z.string(),
  rootDagRunId: z.string(),
  parentDagRunName: z.string(),
  parentDagRunId: z.string(),
  startedAt: z.string(),
});

/** Spec: Worker object (snake_case on the wire). */
export const WorkerSchema = z.object({
  id: z.string(),
  labels: z.record(z.string(), z.string()),
  health_status: z.enum([
    'WORKER_HEALTH_STATUS_HEALTHY',
    'WORKER_HEALTH_STATUS_WARNING',
    'WORKER_HEALTH_STATUS_UNHEALTHY',
  ]),
  last_heartbeat: z.string(),
  running_tasks: z.array(RunningTaskSchema),
});

const HEALTH = {
  healthy: 'WORKER_HEALTH_STATUS_HEALTHY',
  warning: 'WORKER_HEALTH_STATUS_WARNING',
  unhealthy: 'WORKER_HEALTH_STATUS_UNHEALTHY',
} as const;

/** Domain worker -> spec wire shape. */
export const toApiWorker = (w: WorkerInfo): z.infer<typeof WorkerSchema> => ({
  id: w.id,
  labels: { ...w.labels },
  health_status: HEALTH[w.health],
  last_heartbeat: w.lastHeartbeat.toISOString().replace(/\.\d{3}Z$/, 'Z'),
  running_tasks: w.runningTasks.map((t) => ({ ...t })),
});
