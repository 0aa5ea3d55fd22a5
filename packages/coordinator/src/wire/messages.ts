/**
 * The messages of `proto/coordinator.proto` as grpc-js hands them over (proto-loader with
 * camelCase fields, 64-bit integers as numbers, defaults filled in).
 */
export interface RunRefMsg {
  name: string;
  dagRunId: string;
}

export interface RunningTaskMsg {
  run: RunRefMsg | null;
  root: RunRefMsg | null;
  /** `null` or empty names for a top-level run. */
  parent: RunRefMsg | null;
  startedAt: string;
}

export interface HeartbeatRequest {
  workerId: string;
  labels: Record<string, string>;
  capacity: number;
  runningTasks: RunningTaskMsg[];
  incarnation: string;
  accepting: boolean;
  /** Absent from workers before these fields (received as defaults: '' and 0). */
  version?: string;
  host?: string;
  startedAt?: string;
  slotsBusy?: number;
  state?: string;
}

export interface HeartbeatResponse {
  queues: string[];
  cancel: RunRefMsg[];
  drop: RunRefMsg[];
  logDir: string;
  /** '' (active), 'cordoned' or 'draining'; absent from older coordinators. */
  adminState?: string;
  /** What the coordinator takes beyond the first protocol (`Feature` in protocol.ts); empty from older ones. */
  features?: string[];
}

export interface ClaimRequest {
  workerId: string;
  run: RunRefMsg | null;
  root: RunRefMsg | null;
  host: string;
  pid: number;
  processStart: string;
}

export interface ClaimResponse {
  granted: boolean;
  reason: string;
  recordJson: string;
  logDir: string;
  runLogSize: number;
  requeue?: boolean;
}

export interface StatusReport {
  workerId: string;
  run: RunRefMsg | null;
  root: RunRefMsg | null;
  seq: number;
  recordJson: string;
  snapshotJson: string;
  /** Log chunks applied before the record (`Feature.ReportLogs`); empty from older workers. */
  logs?: LogChunk[];
}

export interface StatusAck {
  appliedSeq: number;
  dropped: boolean;
  /** The report's `logs` were taken; false or absent from an older coordinator. */
  logsApplied?: boolean;
}

export interface LogChunk {
  workerId: string;
  run: RunRefMsg | null;
  root: RunRefMsg | null;
  path: string;
  offset: number;
  data: Buffer;
}

export interface LogAck {
  files: { path: string; size: number }[];
}

export interface WatchRequest {
  workerId: string;
  incarnation: string;
}

export type CommandKind =
  'KIND_UNSPECIFIED' | 'KIND_CANCEL' | 'KIND_DROP' | 'KIND_CONSUME' | 'KIND_STATE';

export interface WorkerCommand {
  kind: CommandKind;
  run: RunRefMsg | null;
  /** The dispatch queue, for `KIND_CONSUME`. */
  queue?: string;
  /** For `KIND_STATE`: `active`, `cordoned` or `draining` (an operator's ask). */
  state?: string;
}

export interface CancelRequest {
  run: RunRefMsg | null;
  root: RunRefMsg | null;
}

export interface CancelAck {
  forwarded: boolean;
}

export interface StartChildRequest {
  workerId: string;
  run: RunRefMsg | null;
  root: RunRefMsg | null;
  parent: RunRefMsg | null;
  /** `{dag, localDags}` as JSON. */
  snapshotJson: string;
  params: string;
  selector: Record<string, string>;
  /** Empty when the step is not traced. */
  traceparent: string;
}

export interface StartChildAck {
  started: boolean;
}

export interface GetRunRequest {
  run: RunRefMsg | null;
  root: RunRefMsg | null;
}

export interface GetRunResponse {
  found: boolean;
  recordJson: string;
}

export interface DeregisterRequest {
  workerId: string;
  incarnation: string;
}

export interface DeregisterAck {
  forgotten: boolean;
}
