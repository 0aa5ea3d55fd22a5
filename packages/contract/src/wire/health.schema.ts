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
  /**
   * Beyond the spec: with the PostgreSQL store, one `SELECT 1` round trip in ms (null when the
   * database did not answer within 2 s) and the connection pool's use.
   */
  database: z
    .object({
      latencyMs: z.number().nullable(),
      pool: z.object({
        size: z.number().int(),
        inUse: z.number().int(),
        idle: z.number().int(),
        waiting: z.number().int(),
      }),
    })
    .optional(),
});

export type HealthResponse = z.infer<typeof HealthResponse>;

/**
 * GET /metrics query (beyond the spec): `name`, comma-separated metric names, answers those
 * metrics only (the web UI's sidebar reads three gauges, not every DAG's histograms).
 */
export const MetricsQuery = z.object({
  name: z
    .string()
    .regex(/^[a-zA-Z_:][a-zA-Z0-9_:]*(,[a-zA-Z_:][a-zA-Z0-9_:]*)*$/, {
      message: 'give metric names separated by commas, e.g. svc_scheduler_running,svc_info',
    })
    .optional()
    .describe('Only these metrics, comma-separated names; default every metric'),
});

export type MetricsQuery = z.infer<typeof MetricsQuery>;
