import * as grpc from '@grpc/grpc-js';
import { PROTOCOL_KEY, PROTOCOL_VERSION, WORKER_ID_KEY } from '../wire/protocol.js';

/** Who the client says it is on every call. */
export interface CallIdentity {
  /** Sent as `authorization: Bearer <token>`; empty or absent sends none. */
  readonly token?: string | undefined;
  /** Named in the coordinator's log when it refuses the worker. */
  readonly workerId?: string | undefined;
  /** @default PROTOCOL_VERSION (another value only to test the coordinator's refusal) */
  readonly protocolVersion?: number | undefined;
}

/**
 * A client interceptor that adds the identity to every call's metadata (unary and streams alike;
 * call credentials would need TLS, and a token may be used on a loopback or private link).
 */
export const identityInterceptor =
  (id: CallIdentity): grpc.Interceptor =>
  (options, nextCall) =>
    new grpc.InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set(PROTOCOL_KEY, String(id.protocolVersion ?? PROTOCOL_VERSION));
        if (id.workerId) metadata.set(WORKER_ID_KEY, id.workerId);
        if (id.token) metadata.set('authorization', `Bearer ${id.token}`);
        next(metadata, listener);
      },
    });
