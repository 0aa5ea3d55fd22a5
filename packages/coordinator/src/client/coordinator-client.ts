import * as grpc from '@grpc/grpc-js';
import type { Clock } from '@trellis/core';
import { coordinatorService } from '../proto/load-proto.js';
import { channelCredentials, type TlsFiles } from '../server/credentials.js';
import { AddressRing, parseAddresses } from './address-ring.js';
import { identityInterceptor, type CallIdentity } from './call-metadata.js';
import { logStreamOf, type LogStream } from './log-stream.js';
import { tlsHint } from './tls-hint.js';
import type { Feature } from '../wire/protocol.js';
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
  /**
   * `host:port` of the coordinator (its advertise address), or several, comma-separated
   * (replicated coordinators): calls go to one, and move to the next when it is lost.
   */
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
  /** The address (index in the ring) it is open on. */
  readonly index: number;
  readonly call: grpc.ClientDuplexStream<HeartbeatRequest, HeartbeatResponse>;
  readonly waiting: { resolve: (r: HeartbeatResponse) => void; reject: (e: Error) => void }[];
  /** Rejects every waiting heartbeat with `e` and drops the stream. */
  readonly fail: (e: Error) => void;
}

/**
 * A worker's (or a tool's) connection to the coordinator: promise-returning calls with a
 * deadline. Failures reject with the grpc-js error (`code` tells UNAVAILABLE from the rest);
 * the caller decides about retries. Given several addresses, every call goes to the current one
 * of its {@link AddressRing}, which moves on when that coordinator is lost.
 */
export class CoordinatorClient {
  readonly ring: AddressRing;
  /** One channel per address, made on first use. */
  readonly #raws: (RawClient | undefined)[];
  readonly #opts: CoordinatorClientOptions;
  readonly #timeout: number;
  readonly #clock: Clock;
  readonly #tls: TlsFiles | undefined;
  /** The open heartbeat stream and the heartbeats waiting for their replies, oldest first. */
  #beats: HeartbeatStream | undefined;
  /**
   * The features each address's coordinator named in its last heartbeat reply on the open
   * stream (undefined: none heard since the stream opened, or it broke: a restarted coordinator
   * may be an older one).
   */
  readonly #features: (readonly string[] | undefined)[];

  constructor(opts: CoordinatorClientOptions) {
    this.ring = new AddressRing(parseAddresses(opts.address));
    this.#raws = this.ring.addresses.map(() => undefined);
    this.#features = this.ring.addresses.map(() => undefined);
    this.#opts = opts;
    this.#timeout = opts.callTimeoutMs ?? 5_000;
    this.#clock = opts.clock;
    this.#tls = opts.tls;
  }

  /** The address calls go to now. */
  get address(): string {
    return this.ring.address;
  }

  /**
   * True when the coordinator calls go to now named `feature` in its last heartbeat reply (a
   * worker heartbeats before it takes runs). Read just before the call that uses the feature.
   */
  takes(feature: Feature): boolean {
    return this.#features[this.ring.current]?.includes(feature) ?? false;
  }

  /** The channel of the current address, and its index. */
  #current(): { raw: RawClient; index: number } {
    const index = this.ring.current;
    let raw = this.#raws[index];
    if (raw === undefined) {
      const Ctor = coordinatorService();
      raw = new Ctor(this.ring.addresses[index] ?? '', channelCredentials(this.#opts.tls), {
        'grpc.max_send_message_length': 64 * 1024 * 1024,
        'grpc.initial_reconnect_backoff_ms': 200,
        'grpc.max_reconnect_backoff_ms': 2_000,
        'grpc.enable_channelz': 0,
        interceptors: [identityInterceptor(this.#opts)],
      }) as unknown as RawClient;
      this.#raws[index] = raw;
    }
    return { raw, index };
  }

  /** Tells the ring how a call on `index` ended (a lost coordinator moves it on). */
  #observe(index: number, e: unknown): void {
    if (e === null || e === undefined) {
      this.ring.succeeded(index);
      return;
    }
    const code = (e as { code?: number }).code;
    if (code === grpc.status.UNAVAILABLE) this.ring.failed(index, true);
    else if (code === grpc.status.DEADLINE_EXCEEDED) this.ring.failed(index, false);
  }

  /** What to change when a call failed in the TLS handshake, or '' (see `tlsHint`). */
  hint(e: unknown): string {
    return tlsHint((e as Error | null)?.message ?? String(e), this.#tls);
  }

  #deadline(factor: number): number {
    return this.#clock.now().getTime() + factor * this.#timeout;
  }

  #unary<Req, Res>(pick: (raw: RawClient) => UnaryFn<Req, Res>, req: Req): Promise<Res> {
    const { raw, index } = this.#current();
    return new Promise((resolve, reject) => {
      pick(raw).call(raw, req, { deadline: this.#deadline(1) }, (e, res) => {
        this.#observe(index, e);
        if (e) reject(e);
        else resolve(res);
      });
    });
  }

  /**
   * One heartbeat, on the client's heartbeat stream (opened on first use, and again after it
   * broke). Replies come in request order; one that does not come within the call timeout
   * rejects with DEADLINE_EXCEEDED and closes the stream, so the next heartbeat starts afresh.
   */
  heartbeat(req: HeartbeatRequest): Promise<HeartbeatResponse> {
    if (this.#beats !== undefined && this.#beats.index !== this.ring.current)
      this.#beats.fail(
        Object.assign(new Error('moved to another coordinator'), { code: grpc.status.CANCELLED }),
      );
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
    const { raw, index } = this.#current();
    const call = raw.Heartbeats();
    const beats: HeartbeatStream = {
      index,
      call,
      waiting: [],
      fail: (e) => {
        // not if dropped already (its CANCELLED after `cancel()`): a newer stream's features
        if (this.#beats === beats) {
          this.#beats = undefined;
          this.#features[index] = undefined;
        }
        this.#observe(index, e);
        call.cancel();
        for (const w of beats.waiting.splice(0)) w.reject(e);
      },
    };
    call.on('data', (res: HeartbeatResponse) => {
      this.#observe(index, null);
      this.#features[index] = res.features ?? [];
      beats.waiting.shift()?.resolve(res);
    });
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
    return this.#unary((r) => r.ClaimRun, req);
  }

  report(req: StatusReport): Promise<StatusAck> {
    return this.#unary((r) => r.ReportStatus, req);
  }

  cancel(req: CancelRequest): Promise<CancelAck> {
    return this.#unary((r) => r.CancelRun, req);
  }

  /** Asks the coordinator to start a child run on other workers (idempotent by run id). */
  startChild(req: StartChildRequest): Promise<StartChildAck> {
    return this.#unary((r) => r.StartChildRun, req);
  }

  /** A run's stored record (how a worker waits for a child it asked for). */
  getRun(req: GetRunRequest): Promise<GetRunResponse> {
    return this.#unary((r) => r.GetRun, req);
  }

  /** Tells the coordinator this worker exits (after a graceful stop): it forgets it at once. */
  deregister(req: DeregisterRequest): Promise<DeregisterAck> {
    return this.#unary((r) => r.Deregister, req);
  }

  /** Sends a batch of log chunks on one client stream; resolves with the files' new sizes. */
  sendLogs(chunks: readonly LogChunk[]): Promise<LogAck> {
    const stream = this.openLogs();
    for (const c of chunks) stream.write(c);
    return stream.end();
  }

  /** Opens a client stream of log chunks, written as they come (`LogStream`). */
  openLogs(): LogStream {
    const { raw, index } = this.#current();
    return logStreamOf((cb) =>
      raw.StreamLogs({ deadline: this.#deadline(4) }, (e, res) => {
        this.#observe(index, e);
        cb(e, res);
      }),
    );
  }

  /** Opens the command stream (cancel/drop pushed by the coordinator). */
  watchCommands(req: WatchRequest): grpc.ClientReadableStream<WorkerCommand> {
    const { raw, index } = this.#current();
    const stream = raw.WatchCommands(req);
    stream.on('error', (e) => this.#observe(index, e));
    return stream;
  }

  close(): void {
    this.#beats?.fail(
      Object.assign(new Error('the client was closed'), { code: grpc.status.CANCELLED }),
    );
    for (const raw of this.#raws) raw?.close();
  }
}
