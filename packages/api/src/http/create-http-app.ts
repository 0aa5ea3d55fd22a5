import express, { type Application, Router } from 'express';
import { AppError, ErrorCode, type RemoteNodeConfig } from '@trellis/core';
import { errorMiddleware } from '../errors/error-middleware.js';
import { buildOpenApi } from '../openapi/build-openapi.js';
import type { OpenApiDocument } from '../openapi/openapi-document.js';
import { openApiRoutes } from '../openapi/openapi.routes.js';
import { createRemoteNodeProxy } from '../remote/remote-node-proxy.js';
import { systemRoutes } from '../routes/system.routes.js';
import { createWebRouter, type WebOptions } from '../web/serve-web.js';
import { mountRoutes, type Route } from './define-routes.js';
import { jsonBody } from './json-body.js';
import type { HttpDeps } from './deps.js';

/** Extra route tables (DAGs, runs, queues, workers) mounted under /api/v2. */
export type RouteTables = readonly (readonly Route<HttpDeps>[])[];

/** Options of {@link createHttpApp}. */
export interface HttpAppOptions {
  /** `server.basePath`: the app answers under `<basePath>/api/v2`. @default `''` */
  readonly basePath?: string;
  /** `config.remoteNodes`: where `remoteNode=<name>` requests are forwarded. @default `[]` */
  readonly remoteNodes?: readonly RemoteNodeConfig[];
  /** The web UI, served at `<basePath>/`; absent (`server.headless`) = the API only. */
  readonly web?: WebOptions;
}

/**
 * The Express app (no listening inside: the CLI composition root listens, tests use supertest).
 * Everything lives under `<basePath>/api/v2`; `/api/v1` answers 404 naming v2 (docs/architecture.md
 * section 6); an unknown API path is a JSON 404. `GET /api/v2/openapi.json` serves the OpenAPI
 * document of every mounted route. A request whose `remoteNode` names a configured node is
 * forwarded there once the caller passed the local route's permission check. `<basePath>/metrics`
 * answers what `/api/v2/metrics` answers (Prometheus scrapes `/metrics` by default).
 */
export const createHttpApp = (
  deps: HttpDeps,
  tables: RouteTables = [],
  opts: HttpAppOptions = {},
): Application => {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  const base = opts.basePath ?? '';
  const api = Router();
  api.use(jsonBody());

  let document: OpenApiDocument | undefined;
  const system = systemRoutes(deps.metricsPrivate ?? false);
  const all: RouteTables = [
    system,
    ...tables,
    // The document is built on first request, from every table including this one.
    openApiRoutes<HttpDeps>(
      () => (document ??= buildOpenApi(all, { version: deps.version, basePath: base })),
    ),
  ];

  // remoteNode forwarding comes first: per route, so the caller needs that route's permission
  // locally; then for any other path. Without a remote remoteNode both pass the request on.
  const proxy = createRemoteNodeProxy({ nodes: opts.remoteNodes ?? [], auth: deps.auth });
  for (const route of all.flat())
    api[route.method](
      route.path,
      proxy.middleware(route.def.permission ?? 'read', {
        stream: route.def.eventStream !== undefined,
      }),
    );
  api.use(proxy.middleware());

  for (const t of all) mountRoutes(api, t, deps, deps.auth);
  api.use((req, _res, next) => {
    next(new AppError(ErrorCode.NotFound, `no such endpoint: ${req.method} /api/v2${req.path}`));
  });
  app.use(`${base}/api/v2`, api);
  app.use(`${base}/api/v1`, (req, _res, next) => {
    next(
      new AppError(
        ErrorCode.NotFound,
        `the v1 API is not served: use /api/v2 (${req.method} /api/v1${req.path})`,
      ),
    );
  });
  // Prometheus's default path: the same metrics and rules as /api/v2/metrics, never the web UI.
  const prometheus = Router();
  mountRoutes(
    prometheus,
    system.filter((r) => r.path === '/metrics'),
    deps,
    deps.auth,
  );
  app.use(base || '/', prometheus);
  if (opts.web) {
    app.use(
      base || '/',
      createWebRouter(opts.web, { basePath: base, version: deps.version, auth: deps.auth }),
    );
    if (base) app.get('/', (_req, res) => res.redirect(`${base}/`));
  }
  app.use(errorMiddleware(deps.log));
  return app;
};
