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

/** A path segment whose `%` escapes are not UTF-8, as the router reports it (a 400 URIError). */
const isPathDecodeError = (e: unknown): e is URIError =>
  e instanceof URIError && (e as URIError & { status?: unknown }).status === 400;

/** The refusal a non-AppError from the request's own parsing stands for, if it is one. */
const refusalOf = (err: unknown): AppError | undefined =>
  isPathDecodeError(err)
    ? new AppError(
        ErrorCode.BadRequest,
        `malformed path: ${err.message}; a "%" must start a percent-encoded UTF-8 byte such as %2F, and a literal "%" is written %25`,
      )
    : undefined;

/**
 * The only writer of error bodies (docs/architecture.md, "House style"): `{code, message, details?}` with the
 * code's status or the route's override. An AppError is logged at warn; anything else is a bug,
 * answered `internal_error` with a generic message, its stack kept in the log only.
 */
export const errorMiddleware =
  (log: HttpLogger): ErrorRequestHandler =>
  (err: unknown, req, res, _next) => {
    const refusal = AppError.is(err) ? err : refusalOf(err);
    if (refusal) log.warn(`${req.method} ${req.originalUrl}: ${refusal.code}: ${refusal.message}`);
    else log.error(`${req.method} ${req.originalUrl} failed`, err);
    const error =
      refusal ??
      new AppError(
        ErrorCode.Internal,
        'an unexpected error occurred; the server log has the details',
      );
    const overrides = (res.locals as Record<symbol, StatusOverrides | undefined>)[STATUS_OVERRIDES];
    const status = overrides?.[error.code] ?? defaultStatus[error.code];
    if (res.headersSent) return;
    res.status(status).json({
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
    });
  };
