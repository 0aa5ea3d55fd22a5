import * as grpc from '@grpc/grpc-js';

const withStatus = (code: grpc.status, message: string): grpc.ServiceError =>
  Object.assign(new Error(message), { code, details: message, metadata: new grpc.Metadata() });

/** INVALID_ARGUMENT: the request lacks something or carries something unreadable. */
export const badArg = (message: string): grpc.ServiceError =>
  withStatus(grpc.status.INVALID_ARGUMENT, message);

/** FAILED_PRECONDITION: this coordinator cannot do what is asked. */
export const failedPrecondition = (message: string): grpc.ServiceError =>
  withStatus(grpc.status.FAILED_PRECONDITION, message);

/** UNAVAILABLE: this coordinator cannot do it now (its store failed); the caller sends it again. */
export const unavailable = (message: string): grpc.ServiceError =>
  withStatus(grpc.status.UNAVAILABLE, message);

/** INTERNAL, with the failure's message. */
export const internal = (e: unknown): grpc.ServiceError =>
  withStatus(grpc.status.INTERNAL, e instanceof Error ? e.message : String(e));

/** The failure itself when it carries a gRPC status, else INTERNAL. */
export const asServiceError = (e: unknown): grpc.ServiceError =>
  e instanceof Error && 'code' in e ? (e as grpc.ServiceError) : internal(e);

/**
 * A failed claim's status: UNAVAILABLE as it is (a store that failed: the worker sends the claim
 * again), anything else INTERNAL (the worker gives the job up).
 */
export const claimError = (e: unknown): grpc.ServiceError =>
  e instanceof Error && (e as Partial<grpc.ServiceError>).code === grpc.status.UNAVAILABLE
    ? (e as grpc.ServiceError)
    : internal(e);
