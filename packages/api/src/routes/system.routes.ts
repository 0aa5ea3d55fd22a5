import { z } from 'zod';
import { defineRoutes } from '../http/define-routes.js';
import type { HttpDeps } from '../http/deps.js';
import { HealthResponse, MetricsQuery } from '@trellis/contract';

/** System endpoints: /health (public) and /metrics (public unless configured private). */
export const systemRoutes = (metricsPrivate: boolean) =>
  defineRoutes<HttpDeps>((r) => [
    r.get('/health', {
      permission: 'public',
      response: HealthResponse,
      summary: 'Service health: 200 healthy, or 503 unhealthy with the reason',
      handler: async (_in, deps) => {
        const now = deps.clock.now();
        const probe = await deps.health();
        const body = {
          status: probe.error ? ('unhealthy' as const) : ('healthy' as const),
          version: deps.version,
          uptime: Math.max(0, Math.floor((now.getTime() - deps.startedAt.getTime()) / 1000)),
          timestamp: now.toISOString(),
          ...(probe.error ? { error: probe.error } : {}),
          ...(probe.role ? { role: probe.role } : {}),
          ...(probe.leaseAgeSeconds !== undefined
            ? { leaseAgeSeconds: probe.leaseAgeSeconds }
            : {}),
        };
        return { status: probe.error ? 503 : 200, body };
      },
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
