export { createHttpApp, type RouteTables, type HttpAppOptions } from './http/create-http-app.js';
export { answerClientErrors } from './http/client-errors.js';
export { createAuthenticator, AUTH_REALM } from './auth/create-authenticator.js';
export { ROLE_PERMISSIONS, roleCan } from './auth/roles.js';
export { requirePermission } from './auth/require-permission.js';
export {
  createRemoteNodeProxy,
  type RemoteNodeProxy,
  type RemoteNodeProxyOptions,
} from './remote/remote-node-proxy.js';
export {
  createMetrics,
  type Metrics,
  type MetricsOptions,
  type MetricSources,
  type RunFacts,
} from './metrics/create-metrics.js';
export { registerLeadershipMetrics, type LeadershipSources } from './metrics/leadership-metrics.js';
export {
  createHealthProbe,
  healthAnswer,
  type HealthAnswer,
  type HealthProbeOptions,
  type HealthVerdict,
  type DatabaseHealth,
} from './metrics/health.js';
export {
  buildOpenApi,
  renderOpenApiJson,
  toOpenApiPath,
  type BuildOpenApiOptions,
} from './openapi/build-openapi.js';
export { openApiRoutes } from './openapi/openapi.routes.js';
export type { OpenApiDocument } from './openapi/openapi-document.js';
export {
  defineRoutes,
  mountRoutes,
  type Route,
  type RouteDef,
  type RouteResult,
} from './http/define-routes.js';
export type { HttpDeps } from './http/deps.js';
export {
  noAuth,
  describePermission,
  type Authenticator,
  type Permission,
  type Principal,
  type AuthResult,
} from './http/auth.js';
export { errorMiddleware, type HttpLogger } from './errors/error-middleware.js';
export { defaultStatus } from './errors/status-for.js';
export { paginate } from './wire/paginate.js';
export { systemRoutes } from './routes/system.routes.js';
export { runRoutes } from './routes/runs.routes.js';
export { runOutputRoutes } from './routes/run-outputs.routes.js';
export { toLiveWorkers } from './routes/wait-reason.js';
export { webhookRoutes } from './routes/webhooks.routes.js';
export { eventRoutes } from './routes/events.routes.js';
export { queueRoutes } from './routes/queues.routes.js';
export { dashboardRoutes } from './routes/dashboard.routes.js';
export {
  toApiRunSummary,
  toApiRunDetails,
  toApiNode,
  toGridData,
  paramsJsonText,
} from './wire/run.mapper.js';
export { dagRoutes } from './routes/dags.routes.js';
export { API_ROUTE_TABLES, renderApiDocument } from './routes/all-routes.js';
export { createWebRouter, type WebOptions } from './web/serve-web.js';
export { renderIndexHtml, type WebBootConfig } from './web/web-page.js';
export { createWebAuth } from './web/web-auth.js';
export { createOidc, type Oidc, type OidcOptions } from './auth/oidc/create-oidc.js';
