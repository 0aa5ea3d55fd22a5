/** Error codes of the spec's "Errors" section, one to one. */
export const ErrorCode = {
  BadRequest: 'bad_request',
  Unauthorized: 'unauthorized',
  Forbidden: 'forbidden',
  NotFound: 'not_found',
  AlreadyExists: 'already_exists',
  AlreadyRunning: 'already_running',
  NotRunning: 'not_running',
  BadGateway: 'bad_gateway',
  RemoteNodeError: 'remote_node_error',
  ServiceUnavailable: 'service_unavailable',
  Internal: 'internal_error',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const BRAND = Symbol.for('trellis.AppError'); // survives duplicate package copies

/**
 * A request-level refusal carrying a spec error code (docs/architecture.md, "House style", family 3).
 * Problems in user content and step failures are data, never an AppError.
 */
export class AppError extends Error {
  readonly [BRAND] = true;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'AppError';
  }

  /** Brand check that works across copies of this package. */
  static is(e: unknown): e is AppError {
    return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
  }
}

/** The kinds of resource a `not_found` names. */
export type ResourceKind = 'dag' | 'run' | 'step' | 'child run' | 'queue item' | 'remote node';

/** `not_found`: the named resource does not exist. */
export const notFound = (kind: ResourceKind, id: string): AppError =>
  new AppError(ErrorCode.NotFound, `${kind} not found: ${id}`, { kind, id });

/** `bad_request`: the request itself is invalid; `message` says what to change. */
export const badRequest = (message: string, details?: Record<string, unknown>): AppError =>
  new AppError(ErrorCode.BadRequest, message, details);

/** `already_exists`: creating the resource would replace one of the same id. */
export const alreadyExists = (kind: ResourceKind, id: string): AppError =>
  new AppError(ErrorCode.AlreadyExists, `${kind} already exists: ${id}`, { kind, id });

/** `already_running`: the DAG (or run) is already running, so the operation is refused. */
export const alreadyRunning = (dagName: string): AppError =>
  new AppError(ErrorCode.AlreadyRunning, `DAG "${dagName}" is already running`, { dagName });

/** `not_running`: the operation needs a running run, and this one is not running. */
export const notRunning = (dagName: string, dagRunId: string): AppError =>
  new AppError(ErrorCode.NotRunning, `run ${dagRunId} of DAG "${dagName}" is not running`, {
    dagName,
    dagRunId,
  });
