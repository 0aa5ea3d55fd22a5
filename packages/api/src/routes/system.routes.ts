import { z } from 'zod';
import { defineRoutes } from '../http/define-routes.js';
import type { HttpDeps } from '../http/deps.js';
import { healthAnswer } from '../metrics/health.js';
import { HealthResponse, MetricsQuery } from '@trellis/contract';

/** System endpoints: /health (public) and /metrics (public unless configured private). */
export const systemRoutes = (metricsPrivate: boolean) =>
  defineRoutes<HttpDeps>((r) => [
    r.get('/health', {
      permission: 'public',
      response: HealthResponse,
      summary: 'Service health: 200 healthy, or 503 unhealthy with the reason',
      handler: async (_in, deps) =>
        healthAnswer(await deps.health(), deps.version, deps.startedAt, deps.clock.now()),
    }),
    r.get('/metrics', {
      permission: metricsPrivate ? 'read' : 'public',
      query: MetricsQuery,
      // A plain string response is documented as text/plain (openapi/build-openapi.ts).
      response: z.string(),
      summary: 'Metrics in the Prometheus text exposition format',
      handler: async ({ query }, deps) => ({
        status: 200,
        text: await deps.metrics(query.name?.split(',')),
      }),
    }),
  ]);
