import { z } from 'zod';

/** GET /health response (spec: System). */
export const HealthResponse = z.object({
  status: z.enum(['healthy', 'unhealthy']),
  version: z.string(),
  uptime: z.number().int(),
  timestamp: z.string(),
  error: z.string().optional(),
});

export type HealthResponse = z.infer<typeof HealthResponse>;
