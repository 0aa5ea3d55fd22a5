import { openApiRoutes } from '../openapi/openapi.routes.js';
import { renderOpenApiJson } from '../openapi/build-openapi.js';
import type { HttpDeps } from '../http/deps.js';
import { dagRoutes } from './dags.routes.js';
import { dashboardRoutes } from './dashboard.routes.js';
import { eventRoutes } from './events.routes.js';
import { queueRoutes } from './queues.routes.js';
import { runOutputRoutes } from './run-outputs.routes.js';
import { runRoutes } from './runs.routes.js';
import { systemRoutes } from './system.routes.js';
import { webhookRoutes } from './webhooks.routes.js';
import { workerRoutes } from './workers.routes.js';

/** The route tables `trellis server` mounts (besides the system routes createHttpApp adds). */
export const API_ROUTE_TABLES = [
  dagRoutes,
  runRoutes,
  runOutputRoutes,
  queueRoutes,
  eventRoutes,
  dashboardRoutes,
  webhookRoutes,
  workerRoutes,
] as const;

/** The OpenAPI document of the whole API, as checked in at docs/openapi.json. */
export const renderApiDocument = (version: string): string =>
  renderOpenApiJson<HttpDeps>(
    [
      systemRoutes(false),
      ...API_ROUTE_TABLES,
      openApiRoutes<HttpDeps>(() => {
        throw new Error('not served from here');
      }),
    ],
    version,
  );
