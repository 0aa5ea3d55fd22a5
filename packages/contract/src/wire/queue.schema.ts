import { z } from 'zod';
import { RunSummarySchema } from './run.schema.js';

/** Queue (spec: Queue). `maxConcurrency` only for custom queues. */
export const QueueSchema = z.object({
  name: z.string(),
  type: z.enum(['custom', 'dag-based']),
  maxConcurrency: z.number().int().optional(),
  summary: z.object({
    running: z.number().int(),
    queued: z.number().int(),
    total: z.number().int(),
  }),
  runningDAGRuns: z.array(RunSummarySchema),
  queuedDAGRuns: z.array(RunSummarySchema),
});

/** GET /queues response. */
export const ListQueuesResponse = z.object({ queues: z.array(QueueSchema) });

export type ApiQueue = z.infer<typeof QueueSchema>;
export type ListQueuesResponse = z.infer<typeof ListQueuesResponse>;
