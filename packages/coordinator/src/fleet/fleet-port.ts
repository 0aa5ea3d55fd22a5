import type { Labels } from '../registry/selector.js';
import type { RunningTask, WorkerState } from '../registry/worker-registry.js';

/** One worker as the coordinator that hears it publishes it to the others (docs/ha.md). */
export interface FleetWorker {
  readonly id: string;
  readonly labels: Labels;
  readonly capacity: number;
  /** Slots in use as that coordinator counts them: runs it claimed or the worker reports. */
  readonly busy: number;
  readonly accepting: boolean;
  /** Its state there (an operator's cordon or drain included). */
  readonly state: WorkerState;
  /** When that coordinator last heard it (ms since the epoch, that coordinator's clock). */
  readonly lastHeartbeatMs: number;
  readonly runningTasks: readonly RunningTask[];
  readonly version: string;
  readonly host: string;
  readonly startedAt: string;
  readonly slotsBusy: number;
}

/** What one coordinator publishes: the workers connected to it. */
export interface FleetSnapshot {
  /** Unique per coordinator process. */
  readonly coordinatorId: string;
  /** The address its workers dial (for messages). */
  readonly advertise: string;
  /** When it was published (that coordinator's clock): a new value says it is alive. */
  readonly publishedAtMs: number;
  readonly workers: readonly FleetWorker[];
  /**
   * The selectors of the runs it put on a dispatch queue that no worker claimed yet: the others
   * count them against their free slots. Absent from coordinators of earlier versions.
   */
  readonly pending?: readonly Labels[];
}

/**
 * An operator's cordon, drain or uncordon asked of a coordinator the worker is not connected to:
 * the coordinator that hears it applies it at its next sync (docs/ha.md).
 */
export interface StateRequest {
  readonly workerId: string;
  readonly state: WorkerState;
  /** Ignored after this (ms since the epoch, the asking coordinator's clock). */
  readonly untilMs: number;
  /** Unique per request: a newer one for the same worker replaces it. */
  readonly token: string;
}

/**
 * Where coordinators sharing one Redis publish their workers and read each other's (the
 * dispatch package's `RedisFleet`; an in-memory one in tests). Calls reject, never hang, while
 * the backing service is away.
 */
export interface FleetPort {
  /** Replaces this coordinator's snapshot; it lapses after `ttlMs` unless published again. */
  publish(snapshot: FleetSnapshot, ttlMs: number): Promise<void>;
  /** Every coordinator's current snapshot, this one's included. */
  read(): Promise<readonly FleetSnapshot[]>;
  /** The dispatch queues any coordinator put runs on (canonical selectors). */
  queues(): Promise<readonly string[]>;
  /** Leaves a request for the coordinator that hears its worker (replaces an older one). */
  requestState(req: StateRequest, ttlMs: number): Promise<void>;
  /** The requests waiting, one per worker at most. */
  requests(): Promise<readonly StateRequest[]>;
  /** Removes `req` once applied or lapsed, unless a newer request for its worker replaced it. */
  settle(req: StateRequest): Promise<void>;
}

/** A worker heard by another coordinator: the freshest snapshot that lists it. */
export interface RemoteWorker extends FleetWorker {
  readonly coordinatorId: string;
  readonly advertise: string;
  /** Its coordinator published again lately (a dead one's snapshot lingers until it expires). */
  readonly live: boolean;
}
