import { z } from 'zod';

/** GET /health response (spec: System). */
export const HealthResponse = z.object({
  status: z.enum(['healthy', 'unhealthy']),
  version: z.string(),
  uptime: z.number().int(),
  timestamp: z.string(),
  error: z.string().optional(),
  /**
   * Beyond the spec: with replicated coordinators (the PostgreSQL store), whether this instance
   * leads cron, the queues, lost-run recovery and retention, or follows.
   */
  role: z.enum(['leader', 'follower']).optional(),
  /** Beyond the spec: seconds since the leader last renewed its lease (the leader only). */
  leaseAgeSeconds: z.number().optional(),
});

export type HealthResponse = z.infer<typeof HealthResponse>;
