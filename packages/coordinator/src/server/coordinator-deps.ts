import type { Clock } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import type { StoreWriteErrors } from '@trellis/store';
import type { ChildRunsPort } from './child-runs-port.js';
import type { FleetPort } from '../fleet/fleet-port.js';
import type { CoordinatorStore } from './coordinator-store.js';
import type { TlsFiles } from './credentials.js';

/**
 * Where workers' log chunks are written (`StreamLogs`), each at its byte offset, every byte once:
 * the file store's `LogChunkWriter` (the default), or the PostgreSQL store's writer, which keeps
 * the bytes applied in the database so that coordinators sharing it apply a chunk once.
 */
export interface LogChunkSink {
  /** True when a worker may write `path` for `run` (under the log folder or the run's own). */
  accepts(path: string, run: RunRef | undefined, root: RunRef | undefined): Promise<boolean>;
  /** Applies the bytes not yet written; resolves with the log's size after it. */
  apply(path: string, offset: number, data: Buffer): Promise<number>;
  /** Bytes in the log now (0 when none). */
  sizeOf(path: string): Promise<number>;
  /** Forgets what is held for the logs under `dir` (the run ended). */
  forgetUnder(dir: string): void;
  close(): Promise<void>;
}

/** A worker joining or being lost. */
export interface WorkerChange {
  readonly kind: 'joined' | 'lost';
  readonly workerId: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** Everything a coordinator needs, injected once. */
export interface CoordinatorDeps {
  readonly store: CoordinatorStore;
  readonly clock: Clock;
  /** Where run and step logs live (the store's `logDir`; a DAG's own `logDir` adds its folder). */
  readonly logDir: string;
  /** Where workers' log chunks go. @default a `LogChunkWriter` of files under `logDir` */
  readonly logChunks?: LogChunkSink;
  /** Where failed log writes are counted (`GET /health`, metrics): the store's. */
  readonly writeErrors?: StoreWriteErrors;
  /** Listen address. @default 127.0.0.1 */
  readonly host?: string;
  /** Listen port; 0 picks a free one. @default 50055 */
  readonly port?: number;
  /** `host:port` workers dial, shown in logs. @default the bound host:port */
  readonly advertise?: string;
  readonly tls?: TlsFiles;
  /** Worker tokens accepted (`authorization: Bearer`); empty asks for none. @default [] */
  readonly tokens?: readonly string[];
  /** Listen beyond loopback with neither TLS nor tokens. @default false */
  readonly insecure?: boolean;
  /**
   * Called after every change the coordinator writes to a remote run's record (claim, status
   * report, lost worker, cancel before start): the queue processor frees a slot on a final one.
   */
  readonly onRunUpdate?: (record: DagRunRecord) => void;
  /**
   * Called when a worker joins (first heartbeat, back from unhealthy, or a new incarnation) and
   * when it is lost (silent past `lostAfterMs`), once per change: the event bus's worker events.
   */
  readonly onWorkerChange?: (change: WorkerChange) => void;
  /** Called with the time from dispatch to a worker's claim, in ms (metrics). */
  readonly onClaimed?: (latencyMs: number) => void;
  /**
   * Starts and watches child runs that workers ask for (`StartChildRun`, `GetRun`, `CancelRun`).
   * Without it, `StartChildRun` answers FAILED_PRECONDITION.
   */
  readonly children?: ChildRunsPort;
  /** Receives a sentence per problem worked around. @default ignore */
  readonly warn?: (message: string) => void;
  /** A worker silent this long loses its runs (spec: over 15 s unhealthy). @default 15000 */
  readonly lostAfterMs?: number;
  /** How often lost workers are looked for. @default 1000 */
  readonly sweepEveryMs?: number;
  /**
   * Where coordinators sharing one Redis publish their workers and read each other's (replicated
   * coordinators, docs/ha.md). Without it the coordinator knows only its own workers.
   */
  readonly fleet?: FleetPort;
  /** How often the shared worker view is synced. @default 1000 */
  readonly fleetSyncMs?: number;
}

/** Lifecycle of a long-running component (docs/architecture.md). */
export type ComponentState = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';
