import { z } from 'zod';

/**
 * Why a queued run waits (beyond the spec: docs/api.md, "Why a run waits"): `kind` `queue` (its
 * queue is full or runs before it go first), `no-worker` (no live worker matches its DAG's
 * workerSelector) or `singleton` (its DAG runs one at a time and a run of it is active).
 */
export const WaitReasonSchema = z.object({
  kind: z.enum(['queue', 'no-worker', 'singleton']),
  message: z.string(),
  queue: z.string(),
  /** 1-based place among the queue's waiting runs, oldest first. */
  position: z.number().int().min(1),
  /** Runs the queue lets be active at once; null for no limit. */
  capacity: z.number().int().nullable(),
  /** Runs of the queue active now. */
  occupancy: z.number().int().min(0),
  selector: z.record(z.string(), z.string()).optional(),
  /** Each live worker's labels (kind `no-worker`). */
  liveWorkerLabels: z.array(z.record(z.string(), z.string())).optional(),
  /** The DAG is suspended: its schedule starts no runs, queued runs still start in their turn. */
  dagSuspended: z.boolean(),
});

/** Start and enqueue answers: the spec's `{dagRunId}`, plus why the run waits when no worker can take it. */
export const TriggerRunResponse = z.object({
  dagRunId: z.string(),
  waitReason: WaitReasonSchema.optional(),
});

export type ApiWaitReason = z.infer<typeof WaitReasonSchema>;
