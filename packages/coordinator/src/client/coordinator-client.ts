import * as grpc from '@grpc/grpc-js';
import type { Clock } from '@trellis/core';
import { coordinatorService } from '../proto/load-proto.js';
import { channelCredentials, type TlsFiles } from '../server/credentials.js';
import { identityInterceptor, type CallIdentity } from './call-metadata.js';
import { tlsHint } from './tls-hint.js';
import type {
  CancelAck,
  CancelRequest,
  ClaimRequest,
  ClaimResponse,
  DeregisterAck,
  DeregisterRequest,
  GetRunRequest,
  GetRunResponse,
  HeartbeatRequest,
  HeartbeatResponse,
  LogAck,
  LogChunk,
  StartChildAck,
  StartChildRequest,
  StatusAck,
  StatusReport,
  WatchRequest,
  WorkerCommand,
} from '../wire/messages.js';

/** Options of a coordinator client. */
export interface CoordinatorClientOptions extends CallIdentity {
  /** `host:port` of the coordinator (its advertise address). */
  readonly address: string;
  readonly tls?: TlsFiles;
  /** For call deadlines. */
  readonly clock: Clock;
  /** Deadline of each unary call. @default 5000 */
  readonly callTimeoutMs?: number;
}

type UnaryFn<Req, Res> = (
  req: Req,
  options: grpc.CallOptions,
  cb: (e: grpc.ServiceError | null, res: Res) => void,
) => grpc.ClientUnaryCall;

interface RawClient extends grpc.Client {
  Heartbeat: UnaryFn<HeartbeatRequest, HeartbeatResponse>;
  Heartbeats(): grpc.ClientDuplexStream<HeartbeatRequest, HeartbeatResponse>;
  ClaimRun: UnaryFn<ClaimRequest, ClaimResponse>;
  ReportStatus: UnaryFn<StatusReport, StatusAck>;
  CancelRun: UnaryFn<CancelRequest, CancelAck>;
  StartChildRun: UnaryFn<StartChildRequest, StartChildAck>;
  GetRun: UnaryFn<GetRunRequest, GetRunResponse>;
  Deregister: UnaryFn<DeregisterRequest, DeregisterAck>;
  StreamLogs(
    options: grpc.CallOptions,
    cb: (e: grpc.ServiceError | null, res: LogAck) => void,
  ): grpc.ClientWritableStream<LogChunk>;
  WatchCommands(req: WatchRequest): grpc.ClientReadableStream<WorkerCommand>;
}

interface HeartbeatStream {
  readonly call: grpc.ClientDuplexStream<HeartbeatRequest, HeartbeatResponse>;
  readonly waiting: {
    resolve: (r: HeartbeatResponse) => void;
    reject: (e: Error) => void;
  }[];
  /** Rejects every waiting heartbeat with `e` and drops the stream. */
  readonly fail: (e: Error) => void;
}

/**
 * A worker's (or a tool's) connection to the coordinator: promise-returning calls with a
 * deadline. Failures reject with the grpc-js error (`code` tells UNAVAILABLE from the rest);
 * the caller decides about retries.
 */
export class CoordinatorClient {
  readonly #raw: RawClient;
  readonly #timeout: number;
  readonly #clock: Clock;
  readonly #tls: TlsFiles | undefined;
  /** The open heartbeat stream and the heartbeats waiting for their replies, oldest first. */
  #beats: HeartbeatStream | undefined;

  constructor(opts: CoordinatorClientOptions) {
    const Ctor = coordinatorService();
    this.#raw = new Ctor(opts.address, channelCredentials(opts.tls), {
      'grpc.max_send_message_length': 64 * 1024 * 1024,
      'grpc.initial_reconnect_backoff_ms': 200,
      'grpc.max_reconnect_backoff_ms': 2_000,
      'grpc.enable_channelz': 0,
      interceptors: [identityInterceptor(opts)],
    }) as unknown as RawClient;
    this.#timeout = opts.callTimeoutMs ?? 5_000;
    this.#clock = opts.clock;
    this.#tls = opts.tls;
  }

  /** What to change when a call failed in the TLS handshake, or '' (see `tlsHint`). */
  hint(e: unknown): string {
    return tlsHint((e as Error | null)?.message ?? String(e), this.#tls);
  }

  #deadline(factor: number): number {
    return this.#clock.now().getTime() + factor * this.#timeout;
  }

  #unary<Req, Res>(fn: UnaryFn<Req, Res>, req: Req): Promise<Res> {
    return new Promise((resolve, reject) => {
      fn.call(this.#raw, req, { deadline: this.#deadline(1) }, (e, res) =>
        e ? reject(e) : resolve(res),
      );
    });
  }

  /**
   * One heartbeat, on the client's heartbeat stream (opened on first use, and again after it
   * broke). Replies come in request order; one that does not come within the call timeout
   * rejects with DEADLINE_EXCEEDED and closes the stream, so the next heartbeat starts afresh.
   */
  heartbeat(req: HeartbeatRequest): Promise<HeartbeatResponse> {
    const beats = (this.#beats ??= this.#openBeats());
    return new Promise((resolve, reject) => {
      const replied = new AbortController();
      this.#clock.sleep(this.#timeout, replied.signal).then(
        () =>
          beats.fail(
            Object.assign(new Error('no heartbeat reply within the call timeout'), {
              code: grpc.status.DEADLINE_EXCEEDED,
            }),
          ),
        () => undefined, // replied (or failed) in time
      );
      beats.waiting.push({
        resolve: (r) => {
          replied.abort();
          resolve(r);
        },
        reject: (e) => {
          replied.abort();
          reject(e);
        },
      });
      beats.call.write(req);
    });
  }

  #openBeats(): HeartbeatStream {
    const call = this.#raw.Heartbeats();
    const beats: HeartbeatStream = {
      call,
      waiting: [],
      fail: (e) => {
        if (this.#beats === beats) this.#beats = undefined;
        call.cancel();
        for (const w of beats.waiting.splice(0)) w.reject(e);
      },
    };
    call.on('data', (res: HeartbeatResponse) => beats.waiting.shift()?.resolve(res));
    call.on('error', (e) => beats.fail(e));
    call.on('end', () =>
      beats.fail(
        Object.assign(new Error('the coordinator ended the heartbeat stream'), {
          code: grpc.status.UNAVAILABLE,
        }),
      ),
    );
    return beats;
  }

  claim(req: ClaimRequest): Promise<ClaimResponse> {
    return this.#unary(this.#raw.ClaimRun, req);
  }

  report(req: StatusReport): Promise<StatusAck> {
    return this.#unary(this.#raw.ReportStatus, req);
  }

  cancel(req: CancelRequest): Promise<CancelAck> {
    return this.#unary(this.#raw.CancelRun, req);
  }

  /** Asks the coordinator to start a child run on other workers (idempotent by run id). */
  startChild(req: StartChildRequest): Promise<StartChildAck> {
    return this.#unary(this.#raw.StartChildRun, req);
  }

  /** A run's stored record (how a worker waits for a child it asked for). */
  getRun(req: GetRunRequest): Promise<GetRunResponse> {
    return this.#unary(this.#raw.GetRun, req);
  }

  /** Tells the coordinator this worker exits (after a graceful stop): it forgets it at once. */
  deregister(req: DeregisterRequest): Promise<DeregisterAck> {
    return this.#unary(this.#raw.Deregister, req);
  }

  /** Sends a batch of log chunks on one client stream; resolves with the files' new sizes. */
  sendLogs(chunks: readonly LogChunk[]): Promise<LogAck> {
    return new Promise((resolve, reject) => {
      const stream = this.#raw.StreamLogs({ deadline: this.#deadline(4) }, (e, res) =>
        e ? reject(e) : resolve(res),
      );
      stream.on('error', () => undefined); // reported through the callback
      for (const c of chunks) stream.write(c);
      stream.end();
    });
  }

  /** Opens the command stream (cancel/drop pushed by the coordinator). */
  watchCommands(req: WatchRequest): grpc.ClientReadableStream<WorkerCommand> {
    return this.#raw.WatchCommands(req);
  }

  close(): void {
    this.#beats?.fail(
      Object.assign(new Error('the client was closed'), { code: grpc.status.CANCELLED }),
    );
    this.#raw.close();
  }
}

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
