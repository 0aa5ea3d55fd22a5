import type { LogChunkSink } from './coordinator-deps.js';
import type * as grpc from '@grpc/grpc-js';
import type {
  CancelAck,
  CancelRequest,
  ClaimRequest,
  DeregisterRequest,
  GetRunRequest,
  HeartbeatRequest,
  HeartbeatResponse,
  LogAck,
  LogChunk,
  StartChildRequest,
  StatusReport,
} from '../wire/messages.js';
import type { ChildRuns } from './child-runs.js';
import type { Claims } from './claims.js';
import { asServiceError, badArg, claimError, internal } from './grpc-errors.js';
import { receiveLogs } from './log-stream.js';
import type { RunTracker } from './run-tracker.js';
import type { StatusReports } from './status-reports.js';
import type { CommandStream, WorkerCommands } from './worker-commands.js';
import type { WorkerSide } from './worker-side.js';
import { refOf } from './wire-refs.js';

/** The rooms that answer the coordinator's gRPC calls. */
export interface ServiceRooms {
  readonly workers: WorkerSide;
  readonly commands: WorkerCommands;
  readonly tracker: RunTracker;
  readonly claims: Claims;
  readonly reports: StatusReports;
  readonly logs: LogChunkSink;
  readonly children: ChildRuns;
}

export type HeartbeatStream = grpc.ServerDuplexStream<HeartbeatRequest, HeartbeatResponse>;

type Unary<Req, Res> = (
  call: grpc.ServerUnaryCall<Req, Res>,
  callback: grpc.sendUnaryData<Res>,
) => void;

/** A unary handler answering what `handle` resolves to; a failure with `toError` of it. */
const unary =
  <Req, Res>(
    handle: (req: Req) => Promise<Res>,
    toError: (e: unknown) => grpc.ServiceError = asServiceError,
  ): Unary<Req, Res> =>
  (call, cb) => {
    handle(call.request).then(
      (r) => cb(null, r),
      (e: unknown) => cb(toError(e)),
    );
  };

/**
 * The coordinator's gRPC service (`proto/coordinator.proto`), each call handed to its room.
 * Open heartbeat streams are kept in `beatStreams` (ended on stop, so the server can shut down).
 */
export const serviceHandlers = (
  rooms: ServiceRooms,
  beatStreams: Set<HeartbeatStream>,
): grpc.UntypedServiceImplementation => ({
  Heartbeat: heartbeatHandler(rooms.workers),
  Heartbeats: heartbeatStreamHandler(rooms.workers, beatStreams),
  // ClaimRun answers UNAVAILABLE as it is (the worker sends the claim again), any other failure
  // as INTERNAL, an invalid argument too.
  ClaimRun: unary((req: ClaimRequest) => rooms.claims.claim(req), claimError),
  ReportStatus: unary((req: StatusReport) => rooms.reports.report(req)),
  StreamLogs: streamLogsHandler(rooms.logs),
  WatchCommands: (call: CommandStream): void => rooms.commands.watch(call),
  CancelRun: cancelRunHandler(rooms.tracker, rooms.children),
  StartChildRun: unary((req: StartChildRequest) => rooms.children.start(req)),
  GetRun: unary((req: GetRunRequest) => rooms.children.get(req)),
  Deregister: unary((req: DeregisterRequest) => Promise.resolve(rooms.workers.deregister(req))),
});

const heartbeatHandler =
  (workers: WorkerSide): Unary<HeartbeatRequest, HeartbeatResponse> =>
  (call, cb) => {
    try {
      cb(null, workers.heartbeat(call.request));
    } catch (e) {
      cb(internal(e));
    }
  };

/** Heartbeats on one stream, each answered in order; a bad one ends the stream. */
const heartbeatStreamHandler =
  (workers: WorkerSide, beatStreams: Set<HeartbeatStream>) =>
  (call: HeartbeatStream): void => {
    call.on('data', (req: HeartbeatRequest) => {
      try {
        call.write(workers.heartbeat(req));
      } catch (e) {
        call.emit('error', internal(e)); // ends the stream with that status
      }
    });
    beatStreams.add(call);
    const forget = (): void => void beatStreams.delete(call);
    call.on('end', () => call.end());
    call.on('close', forget);
    call.on('error', forget); // a worker that went away: its heartbeats stop
  };

const streamLogsHandler =
  (logs: LogChunkSink) =>
  (call: grpc.ServerReadableStream<LogChunk, LogAck>, cb: grpc.sendUnaryData<LogAck>): void => {
    receiveLogs(logs, call).then(
      (r) => cb(null, r),
      (e: unknown) => cb(asServiceError(e)),
    );
  };

/** Forwards the stop to the run's worker; a child a worker asked for is stopped here too. */
const cancelRunHandler =
  (tracker: RunTracker, children: ChildRuns): Unary<CancelRequest, CancelAck> =>
  (call, cb) => {
    const ref = refOf(call.request.run);
    if (!ref) {
      cb(badArg('CancelRun needs run.name and run.dagRunId'));
      return;
    }
    const root = refOf(call.request.root) ?? ref;
    const forwarded = tracker.cancel(ref, root) === 'forwarded';
    const known = children.cancel(ref, root);
    if (!known) {
      cb(null, { forwarded });
      return;
    }
    known.then(
      (k) => cb(null, { forwarded: forwarded || k }),
      (e: unknown) => cb(internal(e)),
    );
  };
