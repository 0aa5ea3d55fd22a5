import type { ErrorRequestHandler } from 'express';
import { AppError, ErrorCode } from '@trellis/core';
import { defaultStatus, type StatusOverrides } from './status-for.js';

/** Where a route's status overrides travel from the route to the error middleware. */
export const STATUS_OVERRIDES = Symbol.for('trellis.statusOverrides');

/** A logger the HTTP layer writes refusals (warn) and bugs (error) to. */
export interface HttpLogger {
  warn(message: string): void;
  error(message: string, error?: unknown): void;
}

/** Body parser failures (malformed JSON, too large) as express reports them. */
const isBodyParserError = (e: unknown): e is { type: string; status: number; message: string } =>
  typeof e === 'object' && e !== null && 'type' in e && typeof e.type === 'string' && 'status' in e;

/**
 * The only writer of error bodies (docs/architecture.md, "House style"): `{code, message, details?}` with the
 * code's status or the route's override. An AppError is logged at warn; anything else is a bug,
 * answered `internal_error` with a generic message, its stack kept in the log only.
 */
export const errorMiddleware =
  (log: HttpLogger): ErrorRequestHandler =>
  (err: unknown, req, res, _next) => {
    let error: AppError;
    if (AppError.is(err)) error = err;
    else if (isBodyParserError(err)) {
      error =
        err.type === 'entity.too.large'
          ? new AppError(ErrorCode.BadRequest, 'request body is too large')
          : new AppError(
              ErrorCode.BadRequest,
              `malformed JSON body: ${err.message}; send a JSON object with Content-Type: application/json`,
            );
    } else {
      log.error(`${req.method} ${req.originalUrl} failed`, err);
      error = new AppError(
        ErrorCode.Internal,
        'an unexpected error occurred; the server log has the details',
      );
    }
    if (AppError.is(err))
      log.warn(`${req.method} ${req.originalUrl}: ${error.code}: ${error.message}`);
    const overrides = (res.locals as Record<symbol, StatusOverrides | undefined>)[STATUS_OVERRIDES];
    const status = overrides?.[error.code] ?? defaultStatus[error.code];
    if (res.headersSent) return;
    res.status(status).json({
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
    });
  };
