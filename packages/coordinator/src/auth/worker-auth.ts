import { createHash, timingSafeEqual } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { PROTOCOL_KEY, SUPPORTED_PROTOCOLS, WORKER_ID_KEY } from '../wire/protocol.js';

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

const refusal = (code: grpc.status, message: string): grpc.ServiceError =>
  Object.assign(new Error(message), { code, details: message, metadata: new grpc.Metadata() });

const TOKEN_FIX =
  "set SVC_WORKER_TOKEN (worker.token) on the worker to one of the coordinator's tokens (coordinator.tokens, SVC_COORDINATOR_TOKENS)";

/** Refusals remembered for log-once; past it, they are forgotten (and logged again). */
const MAX_LOGGED = 1_000;

const first = (md: grpc.Metadata, key: string): string | undefined => {
  const v = md.get(key)[0];
  return typeof v === 'string' ? v : undefined;
};

/**
 * Who may call the coordinator: every call carries the worker's protocol version and, when the
 * coordinator has tokens, `authorization: Bearer <token>`, compared in constant time (SHA-256
 * digests through `timingSafeEqual`, every accepted token checked) with each accepted token, so
 * an old and a new token work side by side while workers are moved to the new one.
 */
export class WorkerAuth {
  readonly #digests: readonly Buffer[];
  readonly #warn: (message: string) => void;
  /** Refusals already logged, by worker and reason: a worker retries every second. */
  readonly #logged = new Set<string>();

  constructor(tokens: readonly string[], warn: (message: string) => void) {
    this.#digests = tokens.map(digest);
    this.#warn = warn;
  }

  /** Why the call is refused (UNAUTHENTICATED or FAILED_PRECONDITION), or undefined. */
  refuse(metadata: grpc.Metadata, peer: string): grpc.ServiceError | undefined {
    const worker = first(metadata, WORKER_ID_KEY) ?? 'unnamed';
    const problem = this.#protocolProblem(metadata) ?? this.#tokenProblem(metadata);
    if (problem === undefined) return undefined;
    const key = `${worker}\0${problem.reason}`;
    if (!this.#logged.has(key)) {
      // bounded: callers choose the worker names, and an unauthenticated one may send many
      if (this.#logged.size >= MAX_LOGGED) this.#logged.clear();
      this.#logged.add(key);
      this.#warn(
        `refused worker "${worker}" (${peerHost(peer)}): ${problem.message} (logged once per worker and reason)`,
      );
    }
    return refusal(problem.code, problem.message);
  }

  #protocolProblem(md: grpc.Metadata): Problem | undefined {
    const raw = first(md, PROTOCOL_KEY) ?? '1';
    const version = Number(raw);
    if (SUPPORTED_PROTOCOLS.includes(version)) return undefined;
    return {
      reason: 'protocol',
      code: grpc.status.FAILED_PRECONDITION,
      message: `the worker speaks coordinator protocol version ${raw}, this coordinator supports version ${SUPPORTED_PROTOCOLS.join(', ')}: run a worker and a coordinator of the same Trellis release (upgrade the older one)`,
    };
  }

  #tokenProblem(md: grpc.Metadata): Problem | undefined {
    if (this.#digests.length === 0) return undefined;
    const header = first(md, 'authorization');
    const m = header === undefined ? null : /^Bearer\s+(.+)$/i.exec(header);
    if (m === null)
      return {
        reason: 'missing',
        code: grpc.status.UNAUTHENTICATED,
        message: `this coordinator asks workers for a token and none was sent: ${TOKEN_FIX}`,
      };
    const given = digest(m[1] ?? '');
    let ok = false;
    for (const d of this.#digests) ok = timingSafeEqual(given, d) || ok; // no early exit
    if (ok) return undefined;
    return {
      reason: 'wrong',
      code: grpc.status.UNAUTHENTICATED,
      message: `the worker's token is not one this coordinator accepts: ${TOKEN_FIX}; to rotate, list the old and the new token on the coordinator until every worker has the new one`,
    };
  }
}

interface Problem {
  readonly reason: string;
  readonly code: grpc.status;
  readonly message: string;
}

/** `ipv4:10.0.0.7:53122` -> `10.0.0.7`. */
const peerHost = (peer: string): string =>
  peer.replace(/^ipv[46]:/, '').replace(/:\d+$/, '') || 'unknown peer';

type AnyHandler = (
  call: { metadata: grpc.Metadata; getPeer(): string; emit(e: 'error', err: unknown): boolean },
  cb?: (e: grpc.ServiceError) => void,
) => void;

/** Each handler behind the check: a refused call is answered with its error, unhandled. */
export const guardHandlers = (
  handlers: grpc.UntypedServiceImplementation,
  auth: WorkerAuth,
): grpc.UntypedServiceImplementation =>
  Object.fromEntries(
    Object.entries(handlers).map(([name, h]) => {
      const handler = h as unknown as AnyHandler;
      const guarded: AnyHandler = (call, cb) => {
        const e = auth.refuse(call.metadata, call.getPeer());
        if (e === undefined) handler(call, cb);
        else if (cb) cb(e);
        else call.emit('error', e); // a stream ends with that status
      };
      return [name, guarded as grpc.UntypedHandleCall];
    }),
  );
