import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { NodeStatus, RunStatus, isFinalRunStatus, type Clock } from '@trellis/core';
import type { Dag, DagRunRecord, NodeRecord, RunRef } from '@trellis/spec';
import { coordinatorService } from '../proto/load-proto.js';
import {
  canonicalSelector,
  matchesSelector,
  selectorOfQueue,
  type Labels,
} from '../registry/selector.js';
import { UNHEALTHY_MS } from '../registry/worker-health.js';
import { FORGET_AFTER_MS, WorkerRegistry, type WorkerView } from '../registry/worker-registry.js';
import type {
  CancelAck,
  CancelRequest,
  ClaimRequest,
  ClaimResponse,
  GetRunRequest,
  GetRunResponse,
  HeartbeatRequest,
  HeartbeatResponse,
  LogAck,
  LogChunk,
  RunRefMsg,
  StartChildAck,
  StartChildRequest,
  StatusAck,
  StatusReport,
  WatchRequest,
  WorkerCommand,
} from '../wire/messages.js';
import type { ChildRunsPort } from './child-runs-port.js';
import type { CoordinatorStore } from './coordinator-store.js';
import { serverCredentials, type TlsFiles } from './credentials.js';
import { LogWriter } from './log-writer.js';
import { RemoteRuns, runKey, type RemoteRun } from './remote-runs.js';

/** Everything a coordinator needs, injected once. */
export interface CoordinatorDeps {
  readonly store: CoordinatorStore;
  readonly clock: Clock;
  /** Where run and step logs live (the store's `logDir`). */
  readonly logDir: string;
  /** Listen address. @default 127.0.0.1 */
  readonly host?: string;
  /** Listen port; 0 picks a free one. @default 50055 */
  readonly port?: number;
  /** `host:port` workers dial, shown in logs. @default the bound host:port */
  readonly advertise?: string;
  readonly tls?: TlsFiles;
  /**
   * Called after every change the coordinator writes to a remote run's record (claim, status
   * report, lost worker, cancel before start): the queue processor frees a slot on a final one.
   */
  readonly onRunUpdate?: (record: DagRunRecord) => void;
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
}

/** Lifecycle of a long-running component (STYLE.md section 4). */
export type ComponentState = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

type Unary<Req, Res> = (
  call: grpc.ServerUnaryCall<Req, Res>,
  callback: grpc.sendUnaryData<Res>,
) => void;

const refOf = (m: RunRefMsg | null | undefined): RunRef | undefined =>
  m && m.name !== '' && m.dagRunId !== '' ? { name: m.name, dagRunId: m.dagRunId } : undefined;
const toMsg = (r: RunRef): RunRefMsg => ({ name: r.name, dagRunId: r.dagRunId });
const badArg = (message: string): grpc.ServiceError =>
  Object.assign(new Error(message), {
    code: grpc.status.INVALID_ARGUMENT,
    details: message,
    metadata: new grpc.Metadata(),
  });
const failedPrecondition = (message: string): grpc.ServiceError =>
  Object.assign(new Error(message), {
    code: grpc.status.FAILED_PRECONDITION,
    details: message,
    metadata: new grpc.Metadata(),
  });
const internal = (e: unknown): grpc.ServiceError => {
  const message = e instanceof Error ? e.message : String(e);
  return Object.assign(new Error(message), {
    code: grpc.status.INTERNAL,
    details: message,
    metadata: new grpc.Metadata(),
  });
};

/**
 * The gRPC coordinator (ARCHITECTURE.md section 3): the worker registry (health from heartbeat
 * age), claims, ordered status reports and log chunks written to the store (it is the single
 * writer for runs executed on workers), stop forwarding, and the lost-worker rule: the runs of a
 * worker silent for over 15 s are marked failed with an error naming the worker, and a worker
 * that comes back is told to drop them.
 */
export class Coordinator {
  state: ComponentState = 'idle';
  readonly registry = new WorkerRegistry();
  readonly #deps: CoordinatorDeps;
  readonly #runs = new RemoteRuns();
  readonly #logs: LogWriter;
  /** Runs taken from a worker (lost): worker id -> run keys it must drop. */
  readonly #dropped = new Map<string, Set<string>>();
  /** Names of the dispatch queues (canonical selectors) runs were put on. */
  readonly #queues = new Map<string, Labels>();
  readonly #capacityListeners = new Set<() => void>();
  /** Claim saves not yet on disk (stop waits for them). */
  readonly #saving = new Set<Promise<void>>();
  /** Open command streams per worker. */
  readonly #streams = new Map<string, grpc.ServerWritableStream<WatchRequest, WorkerCommand>>();
  /** Open heartbeat streams (ended on stop, so the server can shut down). */
  readonly #beatStreams = new Set<grpc.ServerDuplexStream<HeartbeatRequest, HeartbeatResponse>>();
  readonly #sweepStop = new AbortController();
  #sweep: Promise<void> | undefined;
  #server: grpc.Server | undefined;
  #port = 0;
  readonly #warn: (m: string) => void;
  readonly #startedAt: Date;

  constructor(deps: CoordinatorDeps) {
    this.#deps = deps;
    this.#warn = deps.warn ?? (() => undefined);
    this.#logs = new LogWriter(deps.logDir, this.#warn);
    this.#startedAt = deps.clock.now();
  }

  /** The port the server listens on (after `start`). */
  get port(): number {
    return this.#port;
  }

  /** `host:port` workers dial. */
  get advertise(): string {
    return this.#deps.advertise || `${this.#deps.host ?? '127.0.0.1'}:${this.#port}`;
  }

  /** Binds the gRPC server, adopts remote runs left running in the store, starts the sweep. */
  async start(): Promise<void> {
    this.state = 'starting';
    try {
      await this.#adoptRunningRuns();
      const server = new grpc.Server({
        'grpc.max_receive_message_length': 64 * 1024 * 1024,
        // Channelz bookkeeping costs CPU on every call; 1,000 workers beat every second.
        'grpc.enable_channelz': 0,
      });
      server.addService(coordinatorService().service, this.#handlers());
      const host = this.#deps.host ?? '127.0.0.1';
      const port = this.#deps.port ?? 50_055;
      this.#port = await new Promise<number>((resolve, reject) =>
        server.bindAsync(`${host}:${port}`, serverCredentials(this.#deps.tls), (e, p) =>
          e ? reject(e) : resolve(p),
        ),
      );
      this.#server = server;
      this.#sweep = this.#sweepLoop();
      this.state = 'running';
    } catch (e) {
      this.state = 'failed';
      throw e;
    }
  }

  /** Stops serving; runs on workers go on and report to the next coordinator. */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopping';
    this.#sweepStop.abort();
    await this.#sweep;
    await Promise.all([...this.#saving]);
    for (const s of this.#streams.values()) s.end();
    this.#streams.clear();
    for (const s of this.#beatStreams) s.end(); // workers open a new one to the next coordinator
    this.#beatStreams.clear();
    const server = this.#server;
    if (server) {
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      server.forceShutdown();
    }
    this.#runs.clear();
    await this.#logs.close();
    this.state = 'stopped';
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  // ---- what the dispatcher and the API use --------------------------------------------------

  /** Workers as `GET /workers` shows them. */
  workers(): WorkerView[] {
    return this.registry.list(this.#deps.clock.now());
  }

  /** Makes a dispatch queue known, so matching workers are told to consume it. */
  addQueue(name: string): void {
    if (this.#queues.has(name)) return;
    const selector = selectorOfQueue(name);
    this.#queues.set(name, selector);
    // Matching workers start consuming at once, not at their next heartbeat.
    for (const w of this.registry.eligible(selector, this.#deps.clock.now()))
      this.#push(w.id, { kind: 'KIND_CONSUME', run: null, queue: name });
  }

  /** Tracks a run put on a dispatch queue, until a worker claims it. */
  expect(record: DagRunRecord, selector: Labels): void {
    const ref = { name: record.name, dagRunId: record.dagRunId };
    this.addQueue(canonicalSelector(selector));
    if (this.#runs.get(ref, record.root)) return;
    this.#track(ref, record.root, undefined, selector).dispatchedAtMs = this.#deps.clock
      .now()
      .getTime();
  }

  /** Forgets a run that was put on a queue but never reached it (the enqueue failed). */
  unexpect(ref: RunRef, root: RunRef = ref): void {
    this.#runs.remove(ref, root);
  }

  /**
   * Null when a worker can take a run with `selector` now: healthy matching workers have more
   * free slots than runs already dispatched to them and not yet claimed. Otherwise why not.
   */
  availability(selector: Labels): string | null {
    const now = this.#deps.clock.now();
    const eligible = this.registry.eligible(selector, now);
    if (eligible.length === 0) {
      const sel = canonicalSelector(selector);
      return sel === 'any'
        ? 'no healthy worker is connected'
        : `no healthy worker has labels ${sel}`;
    }
    let free = 0;
    for (const w of eligible) free += Math.max(0, w.capacity - this.#busySlots(w.id));
    const pending = this.#runs
      .pending()
      .filter((p) => eligible.some((w) => matchesSelector(w.labels, p.selector))).length;
    if (free - pending > 0) return null;
    return `every worker matching ${canonicalSelector(selector)} is busy`;
  }

  /** Calls `listener` whenever worker capacity may have grown. Returns a disposer. */
  onCapacity(listener: () => void): () => void {
    this.#capacityListeners.add(listener);
    return () => this.#capacityListeners.delete(listener);
  }

  /**
   * Forwards a stop to the worker running `ref`. Returns `forwarded` (a worker has it),
   * `pending` (still on its dispatch queue: the dispatcher removes it) or `unknown`.
   */
  cancel(ref: RunRef, root: RunRef = ref): 'forwarded' | 'pending' | 'unknown' {
    const run = this.#runs.get(ref, root);
    if (!run) return 'unknown';
    run.cancelRequested = true;
    if (run.workerId === undefined) return 'pending';
    this.#push(run.workerId, { kind: 'KIND_CANCEL', run: toMsg(ref) });
    return 'forwarded';
  }

  /**
   * Ends a run that never reached a worker (dequeued or stopped while on its dispatch queue):
   * writes its final record and forgets it.
   */
  async finishUnclaimed(ref: RunRef, status: RunStatus, error: string, root: RunRef = ref) {
    const run = this.#runs.get(ref, root);
    if (run && run.workerId !== undefined) return false;
    this.#runs.remove(ref, root);
    const record = await this.#deps.store.getRun(ref, { root });
    if (isFinalRunStatus(record.status)) return false;
    const now = this.#deps.clock.now().toISOString();
    record.status = status;
    record.finishedAt = now;
    record.error = error;
    record.revision += 1;
    await this.#deps.store.saveRun(record);
    this.#deps.onRunUpdate?.(record);
    this.#capacityChanged();
    return true;
  }

  // ---- gRPC handlers --------------------------------------------------------------------------

  #handlers(): grpc.UntypedServiceImplementation {
    const heartbeat: Unary<HeartbeatRequest, HeartbeatResponse> = (call, cb) => {
      try {
        cb(null, this.#onHeartbeat(call.request));
      } catch (e) {
        cb(internal(e));
      }
    };
    const heartbeats = (
      call: grpc.ServerDuplexStream<HeartbeatRequest, HeartbeatResponse>,
    ): void => {
      call.on('data', (req: HeartbeatRequest) => {
        try {
          call.write(this.#onHeartbeat(req));
        } catch (e) {
          call.emit('error', internal(e)); // ends the stream with that status
        }
      });
      this.#beatStreams.add(call);
      const forget = (): void => void this.#beatStreams.delete(call);
      call.on('end', () => call.end());
      call.on('close', forget);
      call.on('error', forget); // a worker that went away: its heartbeats stop
    };
    const claim: Unary<ClaimRequest, ClaimResponse> = (call, cb) => {
      this.#onClaim(call.request).then(
        (r) => cb(null, r),
        (e: unknown) => cb(internal(e)),
      );
    };
    const report: Unary<StatusReport, StatusAck> = (call, cb) => {
      this.#onReport(call.request).then(
        (r) => cb(null, r),
        (e: unknown) =>
          cb(e instanceof Error && 'code' in e ? (e as grpc.ServiceError) : internal(e)),
      );
    };
    const streamLogs = (
      call: grpc.ServerReadableStream<LogChunk, LogAck>,
      cb: grpc.sendUnaryData<LogAck>,
    ): void => {
      this.#onLogStream(call).then(
        (r) => cb(null, r),
        (e: unknown) =>
          cb(e instanceof Error && 'code' in e ? (e as grpc.ServiceError) : internal(e)),
      );
    };
    const watch = (call: grpc.ServerWritableStream<WatchRequest, WorkerCommand>): void => {
      const id = call.request.workerId;
      this.#streams.get(id)?.end();
      this.#streams.set(id, call);
      const forget = (): void => {
        if (this.#streams.get(id) === call) this.#streams.delete(id);
      };
      call.on('cancelled', forget);
      call.on('error', forget);
      call.on('close', forget);
      // Anything already due (a stop requested while the worker was away).
      for (const c of this.#commandsFor(id)) call.write(c);
    };
    const cancelRun: Unary<CancelRequest, CancelAck> = (call, cb) => {
      const ref = refOf(call.request.run);
      if (!ref) {
        cb(badArg('CancelRun needs run.name and run.dagRunId'));
        return;
      }
      const root = refOf(call.request.root) ?? ref;
      const forwarded = this.cancel(ref, root) === 'forwarded';
      const children = this.#deps.children;
      if (!children) {
        cb(null, { forwarded });
        return;
      }
      // A child a worker asked for: its waiter here stops it (queue or worker).
      children.cancel(ref, root).then(
        (known) => cb(null, { forwarded: forwarded || known }),
        (e: unknown) => cb(internal(e)),
      );
    };
    const startChild: Unary<StartChildRequest, StartChildAck> = (call, cb) => {
      this.#onStartChild(call.request).then(
        (r) => cb(null, r),
        (e: unknown) =>
          cb(e instanceof Error && 'code' in e ? (e as grpc.ServiceError) : internal(e)),
      );
    };
    const getRun: Unary<GetRunRequest, GetRunResponse> = (call, cb) => {
      this.#onGetRun(call.request).then(
        (r) => cb(null, r),
        (e: unknown) =>
          cb(e instanceof Error && 'code' in e ? (e as grpc.ServiceError) : internal(e)),
      );
    };
    return {
      Heartbeat: heartbeat,
      Heartbeats: heartbeats,
      ClaimRun: claim,
      ReportStatus: report,
      StreamLogs: streamLogs,
      WatchCommands: watch,
      CancelRun: cancelRun,
      StartChildRun: startChild,
      GetRun: getRun,
    };
  }

  #onHeartbeat(req: HeartbeatRequest): HeartbeatResponse {
    const now = this.#deps.clock.now();
    if (req.workerId === '') throw new Error('heartbeat without worker_id');
    const tasks = req.runningTasks.map((t) => ({
      dagName: t.run?.name ?? '',
      dagRunId: t.run?.dagRunId ?? '',
      rootDagRunName: t.root?.name ?? t.run?.name ?? '',
      rootDagRunId: t.root?.dagRunId ?? t.run?.dagRunId ?? '',
      parentDagRunName: t.parent?.name ?? '',
      parentDagRunId: t.parent?.dagRunId ?? '',
      startedAt: t.startedAt,
    }));
    const change = this.registry.heartbeat(
      {
        id: req.workerId,
        labels: { ...req.labels },
        capacity: req.capacity,
        runningTasks: tasks,
        incarnation: req.incarnation,
        accepting: req.accepting,
      },
      now,
    );
    // A run the worker executes that the coordinator no longer gives it must be dropped.
    const drop: RunRefMsg[] = [];
    const dropped = this.#dropped.get(req.workerId);
    for (const t of tasks) {
      const ref = { name: t.dagName, dagRunId: t.dagRunId };
      const root = { name: t.rootDagRunName, dagRunId: t.rootDagRunId };
      const run = this.#runs.get(ref, root);
      const key = runKey(ref, root);
      if (dropped?.has(key) || (run !== undefined && run.workerId !== req.workerId))
        drop.push(toMsg(ref));
    }
    if (change.joined || change.grew) this.#capacityChanged();
    return {
      queues: [...this.#queues.entries()]
        .filter(([, sel]) => matchesSelector(req.labels, sel))
        .map(([q]) => q),
      cancel: this.#commandsFor(req.workerId).map((c) => c.run as RunRefMsg),
      drop,
      logDir: this.#deps.logDir,
    };
  }

  async #onClaim(req: ClaimRequest): Promise<ClaimResponse> {
    const ref = refOf(req.run);
    if (!ref || req.workerId === '') throw badArg('ClaimRun needs worker_id and run');
    const root = refOf(req.root) ?? ref;
    const refuse = (reason: string): ClaimResponse => ({
      granted: false,
      reason,
      recordJson: '',
      logDir: this.#deps.logDir,
      runLogSize: 0,
    });
    const claimedBy = (): string | undefined => this.#runs.get(ref, root)?.workerId;
    if (claimedBy() !== undefined)
      return refuse(`run ${ref.dagRunId} was already claimed by worker "${claimedBy()}"`);
    let record: DagRunRecord;
    try {
      record = await this.#deps.store.getRun(ref, { root });
    } catch (e) {
      return refuse(`run ${ref.dagRunId} of DAG "${ref.name}" is unknown: ${(e as Error).message}`);
    }
    // Checked again after the read: a concurrent claim of the same run may have won meanwhile.
    if (claimedBy() !== undefined)
      return refuse(`run ${ref.dagRunId} was already claimed by worker "${claimedBy()}"`);
    if (isFinalRunStatus(record.status))
      return refuse(`run ${ref.dagRunId} already ended (status ${record.status})`);
    const owner = record.owner?.workerId;
    if (owner !== undefined && owner !== 'local' && owner !== '')
      return refuse(`run ${ref.dagRunId} was already claimed by worker "${owner}"`);
    const tracked = this.#runs.get(ref, root);
    if (tracked?.cancelRequested) {
      await this.finishUnclaimed(
        ref,
        RunStatus.Cancelled,
        'stopped before a worker started it',
        root,
      );
      return refuse(`run ${ref.dagRunId} was stopped`);
    }
    // Taken synchronously, before any further await: from here on the run is this worker's.
    if (tracked?.dispatchedAtMs !== undefined)
      this.#deps.onClaimed?.(this.#deps.clock.now().getTime() - tracked.dispatchedAtMs);
    if (tracked) tracked.workerId = req.workerId;
    else this.#track(ref, root, req.workerId, {});
    const now = this.#deps.clock.now().toISOString();
    record.owner = {
      pid: req.pid,
      host: req.host,
      processStart: req.processStart,
      workerId: req.workerId,
    };
    record.status = RunStatus.Running;
    if (record.startedAt === '') record.startedAt = now;
    record.revision += 1;
    // The store applies a run's saves in call order, so the worker's first report (sent after
    // this answer) lands after this save; the answer need not wait for the disk.
    const saving = this.#deps.store
      .saveRun(record)
      .catch((e: unknown) =>
        this.#warn(`saving the claim of run ${ref.dagRunId}: ${(e as Error).message}`),
      )
      .finally(() => this.#saving.delete(saving));
    this.#saving.add(saving);
    this.#deps.onRunUpdate?.(record);
    const runLogSize =
      record.log === ''
        ? 0
        : await stat(record.log).then(
            (st) => st.size,
            () => 0,
          );
    return {
      granted: true,
      reason: '',
      recordJson: JSON.stringify(record),
      logDir: this.#deps.logDir,
      runLogSize,
    };
  }

  async #onReport(req: StatusReport): Promise<StatusAck> {
    const ref = refOf(req.run);
    if (!ref || req.workerId === '') throw badArg('ReportStatus needs worker_id and run');
    const root = refOf(req.root) ?? ref;
    const key = runKey(ref, root);
    if (this.#dropped.get(req.workerId)?.has(key)) return { appliedSeq: req.seq, dropped: true };
    let run = this.#runs.get(ref, root);
    if (run?.workerId !== undefined && run.workerId !== req.workerId)
      return { appliedSeq: req.seq, dropped: true };
    if (run && req.seq <= run.seq) return { appliedSeq: run.seq, dropped: false };
    let record: DagRunRecord;
    try {
      record = JSON.parse(req.recordJson) as DagRunRecord;
    } catch {
      throw badArg(`status report of run ${ref.dagRunId} carries no valid record JSON`);
    }
    if (!run) {
      // A child run started on the worker, or a run adopted before this coordinator started.
      const existing = await this.#deps.store.getRun(ref, { root }).catch(() => undefined);
      if (existing === undefined) {
        if (req.snapshotJson === '' || record.parent === undefined)
          throw badArg(`run ${ref.dagRunId} of DAG "${ref.name}" is unknown to this coordinator`);
        const snapshot = JSON.parse(req.snapshotJson) as { dag: unknown; localDags: unknown[] };
        await this.#deps.store.createRun(record, snapshot);
      } else {
        const owner = existing.owner?.workerId;
        if (isFinalRunStatus(existing.status) || (owner !== undefined && owner !== req.workerId))
          return { appliedSeq: req.seq, dropped: !isFinalRunStatus(record.status) };
      }
      run = this.#track(ref, root, req.workerId, {});
    }
    run.seq = req.seq;
    await this.#deps.store.saveRun(record);
    this.#deps.onRunUpdate?.(record);
    if (isFinalRunStatus(record.status)) {
      this.#runs.remove(ref, root);
      this.#logs.forgetUnder(join(this.#deps.logDir, ref.name, ref.dagRunId));
      this.#capacityChanged();
    }
    return { appliedSeq: req.seq, dropped: false };
  }

  async #onStartChild(req: StartChildRequest): Promise<StartChildAck> {
    const ref = refOf(req.run);
    const root = refOf(req.root);
    const parent = refOf(req.parent);
    if (!ref || !root || !parent || req.workerId === '')
      throw badArg('StartChildRun needs worker_id, run, root and parent');
    if (Object.keys(req.selector).length === 0)
      throw badArg('StartChildRun needs a selector: a child without one runs beside its parent');
    const children = this.#deps.children;
    if (!children)
      throw failedPrecondition(
        'this coordinator does not start child runs for workers (no run service in its process)',
      );
    let snapshot: { dag: unknown; localDags?: unknown };
    try {
      snapshot = JSON.parse(req.snapshotJson) as typeof snapshot;
    } catch {
      throw badArg(`StartChildRun of run ${ref.dagRunId} carries no valid snapshot JSON`);
    }
    const started = await children.start({
      workerId: req.workerId,
      ref,
      root,
      parent,
      dag: snapshot.dag as Dag,
      localDags: Array.isArray(snapshot.localDags) ? (snapshot.localDags as Dag[]) : [],
      params: req.params,
      selector: { ...req.selector },
      ...(req.traceparent !== '' ? { traceparent: req.traceparent } : {}),
    });
    return { started };
  }

  async #onGetRun(req: GetRunRequest): Promise<GetRunResponse> {
    const ref = refOf(req.run);
    if (!ref) throw badArg('GetRun needs run.name and run.dagRunId');
    const root = refOf(req.root) ?? ref;
    const record = this.#deps.children
      ? await this.#deps.children.status(ref, root)
      : await this.#deps.store.getRun(ref, { root }).catch(() => undefined);
    return record
      ? { found: true, recordJson: JSON.stringify(record) }
      : { found: false, recordJson: '' };
  }

  async #onLogStream(call: grpc.ServerReadableStream<LogChunk, LogAck>): Promise<LogAck> {
    const sizes = new Map<string, number>();
    // Chunks are applied one at a time, in arrival order.
    for await (const raw of call) {
      const chunk = raw as LogChunk;
      if (!this.#logs.isInside(chunk.path))
        throw badArg(
          `log path ${JSON.stringify(chunk.path)} is outside the coordinator's log directory`,
        );
      sizes.set(chunk.path, await this.#logs.apply(chunk.path, chunk.offset, chunk.data));
    }
    return { files: [...sizes].map(([path, size]) => ({ path, size })) };
  }

  // ---- internals ------------------------------------------------------------------------------

  #track(ref: RunRef, root: RunRef, workerId: string | undefined, selector: Labels): RemoteRun {
    const run: RemoteRun = {
      ref,
      root,
      workerId,
      selector,
      seq: 0,
      unwatch: () => undefined,
      cancelRequested: false,
    };
    this.#runs.add(run);
    try {
      const isChild = ref.name !== root.name || ref.dagRunId !== root.dagRunId;
      run.unwatch = this.#deps.store.watchStop(ref, isChild ? { root } : {}, () => {
        const r = this.#runs.get(ref, root);
        if (!r) return;
        if (this.cancel(ref, root) === 'pending')
          this.finishUnclaimed(
            ref,
            RunStatus.Cancelled,
            'stopped before a worker started it',
            root,
          ).catch((e: unknown) =>
            this.#warn(`stopping queued run ${ref.dagRunId}: ${(e as Error).message}`),
          );
      });
    } catch (e) {
      this.#warn(`cannot watch stop requests of run ${ref.dagRunId}: ${(e as Error).message}`);
    }
    return run;
  }

  /** Slots a worker has in use: runs it claimed, or reports, whichever is more. */
  #busySlots(workerId: string): number {
    const reported =
      this.registry.get(workerId)?.runningTasks.filter((t) => t.parentDagRunId === '').length ?? 0;
    return Math.max(reported, this.#runs.slotsOf(workerId));
  }

  #commandsFor(workerId: string): WorkerCommand[] {
    const out: WorkerCommand[] = [];
    if (!this.#runs.anyCancelRequested()) return out;
    for (const r of this.#runs.ofWorker(workerId))
      if (r.cancelRequested) out.push({ kind: 'KIND_CANCEL', run: toMsg(r.ref) });
    return out;
  }

  #push(workerId: string, cmd: WorkerCommand): void {
    const s = this.#streams.get(workerId);
    if (!s) return; // the next heartbeat reply carries it
    try {
      s.write(cmd);
    } catch (e) {
      this.#warn(`command stream of worker ${workerId}: ${(e as Error).message}`);
    }
  }

  #capacityChanged(): void {
    for (const l of this.#capacityListeners) {
      try {
        l();
      } catch (e) {
        this.#warn(`capacity listener failed: ${(e as Error).message}`);
      }
    }
  }

  /** Runs left running on workers by a previous coordinator: tracked again, workers assumed. */
  async #adoptRunningRuns(): Promise<void> {
    const running = await this.#deps.store.listRuns({
      status: RunStatus.Running,
      includeChildren: true,
    });
    for (const s of running) {
      const w = s.owner?.workerId;
      if (w === undefined || w === 'local' || w === '') continue;
      const ref = { name: s.name, dagRunId: s.dagRunId };
      this.#track(ref, s.root, w, {});
      this.registry.assume(w, this.#startedAt);
    }
  }

  async #sweepLoop(): Promise<void> {
    const every = this.#deps.sweepEveryMs ?? 1_000;
    const signal = this.#sweepStop.signal;
    while (!signal.aborted) {
      try {
        await this.#deps.clock.sleep(every, signal);
      } catch {
        return;
      }
      await this.sweepLostWorkers().catch((e: unknown) =>
        this.#warn(`lost-worker sweep failed: ${(e as Error).message}`),
      );
    }
  }

  /**
   * The lost-worker rule: each run of a worker silent for longer than the threshold is marked
   * failed with an error naming the worker; its slot frees at once. Exposed for tests.
   */
  async sweepLostWorkers(): Promise<void> {
    const now = this.#deps.clock.now();
    const lostAfter = this.#deps.lostAfterMs ?? UNHEALTHY_MS;
    for (const w of this.registry.silentFor(lostAfter, now)) {
      for (const run of this.#runs.ofWorker(w.id)) {
        await this.#failLost(run, w.id, w.lastHeartbeat, now);
      }
      if (now.getTime() - w.lastHeartbeat.getTime() > FORGET_AFTER_MS) this.registry.forget(w.id);
    }
  }

  async #failLost(run: RemoteRun, workerId: string, last: Date, now: Date): Promise<void> {
    const key = runKey(run.ref, run.root);
    let set = this.#dropped.get(workerId);
    if (!set) this.#dropped.set(workerId, (set = new Set()));
    set.add(key);
    this.#runs.remove(run.ref, run.root);
    let record: DagRunRecord;
    try {
      record = await this.#deps.store.getRun(run.ref, { root: run.root });
    } catch (e) {
      this.#warn(`lost run ${run.ref.dagRunId}: ${(e as Error).message}`);
      return;
    }
    if (isFinalRunStatus(record.status)) return;
    const error = `worker "${workerId}" was lost: no heartbeat since ${last.toISOString()} (over ${Math.round((this.#deps.lostAfterMs ?? UNHEALTHY_MS) / 1000)} s)`;
    const iso = now.toISOString();
    const failNode = (n: NodeRecord | undefined): void => {
      if (!n) return;
      if (n.status === NodeStatus.Running) {
        n.status = NodeStatus.Failed;
        n.finishedAt = iso;
        n.error = error;
      }
    };
    for (const n of record.nodes) failNode(n);
    failNode(record.onExit);
    failNode(record.onSuccess);
    failNode(record.onFailure);
    failNode(record.onCancel);
    record.status = RunStatus.Failed;
    record.error = error;
    record.finishedAt = iso;
    record.revision += 1_000; // above anything the lost worker may still send
    await this.#deps.store.saveRun(record);
    this.#push(workerId, { kind: 'KIND_DROP', run: toMsg(run.ref) });
    this.#deps.onRunUpdate?.(record);
    this.#capacityChanged();
  }
}
