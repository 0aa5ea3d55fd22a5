import * as grpc from '@grpc/grpc-js';

/** True for errors that mean "the coordinator is not reachable now" (retry later). */
export const isUnavailable = (e: unknown): boolean => {
  const code = (e as { code?: number } | null)?.code;
  return (
    code === grpc.status.UNAVAILABLE ||
    code === grpc.status.DEADLINE_EXCEEDED ||
    code === grpc.status.CANCELLED ||
    code === grpc.status.UNKNOWN
  );
};

/** True when the coordinator refused this worker itself (token, protocol version). */
export const isWorkerRefused = (e: unknown): boolean => {
  const code = (e as { code?: number } | null)?.code;
  return code === grpc.status.UNAUTHENTICATED || code === grpc.status.FAILED_PRECONDITION;
};

/**
 * True for the coordinator's refusal of a message as such (`INVALID_ARGUMENT`): sending the same
 * message again cannot succeed. Every other failure may pass (retry later).
 */
export const isRefused = (e: unknown): boolean =>
  (e as { code?: number } | null)?.code === grpc.status.INVALID_ARGUMENT;
