import type { Request, RequestHandler, Response, Router } from 'express';
import type { z } from 'zod';
import { AppError, ErrorCode } from '@trellis/core';
import { STATUS_OVERRIDES } from '../errors/error-middleware.js';
import type { StatusOverrides } from '../errors/status-for.js';
import { describePermission, type Authenticator, type Permission } from './auth.js';

/** What a handler returns: a status, and a JSON body (absent = empty body). */
export interface RouteResult {
  readonly status: number;
  readonly body?: unknown;
  /**
   * A body already made: plain text (metrics), or JSON as bytes (long run listings), with its
   * ETag when the route has a cheaper one than Express's hash of the whole body.
   */
  readonly text?: {
    readonly contentType: string;
    readonly body: string | Buffer;
    readonly etag?: string;
  };
  /** The handler answers itself through `res` (a Server-Sent Events stream). */
  readonly streamed?: boolean;
}

type Schema = z.ZodType;
type Infer<S> = S extends z.ZodType ? z.infer<S> : undefined;

/** One route: its validation schemas, permission and handler. */
export interface RouteDef<
  P extends Schema | undefined,
  Q extends Schema | undefined,
  B extends Schema | undefined,
  D,
> {
  readonly params?: P;
  readonly query?: Q;
  readonly body?: B;
  /**
   * Request headers the route reads, an object schema keyed by header name (`Idempotency-Key`):
   * validated like the query (400 bad_request) and documented as header parameters.
   */
  readonly headers?: z.ZodObject;
  /** Response schema, for tests and the OpenAPI document. */
  readonly response?: Schema;
  /**
   * For a Server-Sent Events route: the schema of each event's `data` (the OpenAPI document
   * shows a `text/event-stream` answer). Such a route is not forwarded to a remote node.
   */
  readonly eventStream?: Schema;
  /** Needed permission; `'public'` skips authentication. @default 'read' */
  readonly permission?: Permission | 'public';
  readonly statusFor?: StatusOverrides;
  readonly summary?: string;
  readonly handler: (
    input: {
      params: Infer<P>;
      query: Infer<Q>;
      body: Infer<B>;
      /** The declared `headers`, validated (absent ones undefined). */
      headers: Readonly<Record<string, unknown>>;
      req: Request;
      res: Response;
    },
    deps: D,
  ) => Promise<RouteResult>;
}

/** A route as the app mounts it. */
export interface Route<D> {
  readonly method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  readonly path: string;
  readonly def: RouteDef<Schema | undefined, Schema | undefined, Schema | undefined, D>;
}

type Builder<D> = {
  [M in Route<D>['method']]: <
    P extends Schema | undefined = undefined,
    Q extends Schema | undefined = undefined,
    B extends Schema | undefined = undefined,
  >(
    path: string,
    def: RouteDef<P, Q, B, D>,
  ) => Route<D>;
};

/** Declarative route tables (docs/architecture.md, "House style"). */
export const defineRoutes = <D>(build: (r: Builder<D>) => Route<D>[]): Route<D>[] => {
  const make =
    (method: Route<D>['method']) =>
    (
      path: string,
      def: RouteDef<Schema | undefined, Schema | undefined, Schema | undefined, D>,
    ): Route<D> => ({ method, path, def });
  return build({
    get: make('get'),
    post: make('post'),
    put: make('put'),
    patch: make('patch'),
    delete: make('delete'),
  } as Builder<D>);
};

/** zod issues as one sentence naming each parameter, plus structured details. */
type Where = 'path' | 'query' | 'body' | 'header';

const invalid = (where: Where, error: z.ZodError): AppError => {
  const parts = error.issues.map(
    (i) => `${i.path.length > 0 ? i.path.join('.') : where}: ${i.message}`,
  );
  return new AppError(
    ErrorCode.BadRequest,
    `invalid ${where === 'path' ? 'path parameter' : where}: ${parts.join('; ')}`,
    {
      issues: error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    },
  );
};

const parse = <S extends Schema | undefined>(schema: S, value: unknown, where: Where): Infer<S> => {
  if (!schema) return undefined as Infer<S>;
  const r = schema.safeParse(value);
  if (!r.success) throw invalid(where, r.error);
  return r.data as Infer<S>;
};

/** The declared headers of a request (by their names in the schema), validated. */
const parseHeaders = (schema: z.ZodObject, req: Request): Record<string, unknown> => {
  const sent = Object.fromEntries(Object.keys(schema.shape).map((name) => [name, req.get(name)]));
  return parse(schema, sent, 'header');
};

/** Mounts routes on a router: auth, validation, the handler, and the response. */
export const mountRoutes = <D>(
  router: Router,
  routes: readonly Route<D>[],
  deps: D,
  auth: Authenticator,
): void => {
  for (const route of routes) {
    const { def } = route;
    const handler: RequestHandler = (req: Request, res: Response, next) => {
      if (def.statusFor)
        (res.locals as Record<symbol, StatusOverrides>)[STATUS_OVERRIDES] = def.statusFor;
      const run = async (): Promise<void> => {
        const permission = def.permission ?? 'read';
        if (permission !== 'public') {
          const who = auth.authenticate(req);
          if (!who.ok) {
            res.setHeader('WWW-Authenticate', who.challenge);
            throw new AppError(ErrorCode.Unauthorized, who.message);
          }
          if (!auth.can(who.principal, permission)) {
            throw new AppError(
              ErrorCode.Forbidden,
              `${who.principal.name} (role ${who.principal.role}) may not do this: ${describePermission[permission]} is not allowed`,
              { permission },
            );
          }
        }
        const result = await def.handler(
          {
            params: parse(def.params, req.params, 'path'),
            query: parse(def.query, req.query, 'query'),
            body: parse(def.body, req.body ?? {}, 'body'),
            headers: def.headers ? parseHeaders(def.headers, req) : {},
            req,
            res,
          },
          deps,
        );
        if (result.streamed) return;
        if (result.text) {
          if (result.text.etag !== undefined) res.set('ETag', result.text.etag);
          res.status(result.status).type(result.text.contentType).send(result.text.body);
        } else if (result.body === undefined) res.status(result.status).end();
        else res.status(result.status).json(result.body);
      };
      run().catch(next);
    };
    router[route.method](route.path, handler);
  }
};
