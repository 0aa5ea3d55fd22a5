import type { RunStatus } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { canonicalSelector, type Labels } from '../registry/selector.js';
import { WorkerRegistry, type WorkerState, type WorkerView } from '../registry/worker-registry.js';
import { ChildRuns } from './child-runs.js';
import { Claims } from './claims.js';
import { createContext, type CoordinatorContext } from './coordinator-context.js';
import type { ComponentState, CoordinatorDeps } from './coordinator-deps.js';
import { exposureProblem } from '../auth/listen-guard.js';
import { SharedFleet } from '../fleet/shared-fleet.js';
import { WorkerAuth } from '../auth/worker-auth.js';
import { isTlsEnabled } from './credentials.js';
import { CoordinatorServer } from './grpc-server.js';
import type { ServiceRooms } from './grpc-service.js';
import { HeartbeatReconcile } from './heartbeat-reconcile.js';
import { LostWorkers } from './lost-workers.js';
import { RunTracker } from './run-tracker.js';
import { StatusReports } from './status-reports.js';
import { WorkerSide } from './worker-side.js';

export type { ComponentState, CoordinatorDeps } from './coordinator-deps.js';

/** An operator's state change of a worker: as it is or will be; `handedOn` to its coordinator. */
export interface WorkerStateChange {
  readonly worker: WorkerView;
  readonly handedOn: boolean;
}

/**
 * The gRPC coordinator (docs/architecture.md): the worker registry (health from heartbeat age),
 * claims, ordered status reports and log chunks written to the store (it is the single writer
 * for runs executed on workers), stop forwarding, and the lost-worker rule: the runs of a worker
 * silent for over 15 s are marked failed with an error naming the worker, and a worker that
 * comes back is told to drop them. Each heartbeat is reconciled with the runs tracked for its
 * worker (`HeartbeatReconcile`). Each of those is a room of its own; this class starts and
 * stops them and is what the dispatcher and the API use.
 */
export class Coordinator {
  state: ComponentState = 'idle';
  readonly registry = new WorkerRegistry();
  readonly #deps: CoordinatorDeps;
  readonly #ctx: CoordinatorContext;
  readonly #rooms: ServiceRooms;
  readonly #lost: LostWorkers;
  readonly #reconcile: HeartbeatReconcile;
  readonly #server = new CoordinatorServer();
  readonly #startedAt: Date;
  /** The workers of the other coordinators on the same Redis (undefined: no `deps.fleet`). */
  readonly #fleet: SharedFleet | undefined;

  constructor(deps: CoordinatorDeps) {
    this.#deps = deps;
    this.#ctx = createContext(deps, this.registry);
    const tracker = new RunTracker(this.#ctx);
    this.#reconcile = new HeartbeatReconcile(this.#ctx, tracker);
    const workers = new WorkerSide(this.#ctx, this.#reconcile);
    this.#rooms = {
      workers,
      commands: this.#ctx.commands,
      tracker,
      claims: new Claims(this.#ctx, tracker),
      reports: new StatusReports(this.#ctx, tracker),
      logs: this.#ctx.logs,
      children: new ChildRuns(deps),
    };
    this.#lost = new LostWorkers(this.#ctx);
    this.#startedAt = deps.clock.now();
    this.#fleet =
      deps.fleet === undefined
        ? undefined
        : new SharedFleet(
            this.#ctx,
            deps.fleet,
            {
              advertise: () => this.advertise,
              addQueue: (n) => this.addQueue(n),
              setState: (id, state) => void workers.setState(id, state),
            },
            deps.fleetSyncMs,
          );
    workers.fleet = this.#fleet;
    this.#lost.fleet = this.#fleet;
  }

  /** The port the server listens on (after `start`). */
  get port(): number {
    return this.#server.port;
  }

  /** `host:port` workers dial. */
  get advertise(): string {
    return this.#deps.advertise || `${this.#deps.host ?? '127.0.0.1'}:${this.#server.port}`;
  }

  /** Binds the gRPC server, adopts remote runs left running in the store, starts the sweep. */
  async start(): Promise<void> {
    this.state = 'starting';
    const deps = this.#deps;
    const host = deps.host ?? '127.0.0.1';
    const port = deps.port ?? 50_055;
    const tokens = deps.tokens ?? [];
    try {
      const problem = exposureProblem({
        host,
        port,
        tls: isTlsEnabled(deps.tls) && deps.tls.certFile !== '',
        tokens: tokens.length,
        insecure: deps.insecure ?? false,
      });
      if (problem !== undefined) throw new Error(problem);
      await this.#rooms.tracker.adopt(this.#startedAt);
      const auth = new WorkerAuth(tokens, this.#ctx.warn);
      await this.#server.listen(this.#rooms, { host, port, tls: deps.tls, auth });
      // The others' workers are known before the first sweep could take one for lost.
      await this.#fleet?.start();
      this.#lost.start();
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
    await this.#fleet?.stop();
    await this.#lost.stop();
    await this.#rooms.claims.settled();
    this.#ctx.commands.endAll();
    await this.#server.close();
    await this.#reconcile.settled();
    this.#ctx.runs.clear();
    await this.#ctx.logs.close();
    this.state = 'stopped';
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  // ---- what the dispatcher and the API use --------------------------------------------------

  /** Workers as `GET /workers` shows them. */
  workers(): WorkerView[] {
    return this.#rooms.workers.list();
  }

  /**
   * Cordons (no new runs), drains (no new runs, then the worker exits) or uncordons (`active`) a
   * worker: at once when it is connected here, else handed on to the coordinator that hears it
   * (`handedOn`, applied at that one's next fleet sync). The worker after the change, or
   * undefined for a worker no coordinator knows. Rejects with 503 service_unavailable when the
   * request must go through Redis and Redis does not answer.
   */
  async setWorkerState(id: string, state: WorkerState): Promise<WorkerStateChange | undefined> {
    return this.#rooms.workers.request(id, state);
  }

  /** Makes a dispatch queue known, so matching workers are told to consume it. */
  addQueue(name: string): void {
    this.#rooms.workers.addQueue(name);
  }

  /** Tracks a run put on a dispatch queue, until a worker claims it. */
  expect(record: DagRunRecord, selector: Labels): void {
    this.addQueue(canonicalSelector(selector));
    this.#rooms.tracker.expect(record, selector);
  }

  /** Forgets a run that was put on a queue but never reached it (the enqueue failed). */
  unexpect(ref: RunRef, root: RunRef = ref): void {
    this.#rooms.tracker.unexpect(ref, root);
  }

  /**
   * Null when a worker can take a run with `selector` now: healthy matching workers have more
   * free slots than runs already dispatched to them and not yet claimed. Otherwise why not.
   */
  availability(selector: Labels): string | null {
    return this.#rooms.workers.availability(selector);
  }

  /** Calls `listener` whenever worker capacity may have grown. Returns a disposer. */
  onCapacity(listener: () => void): () => void {
    return this.#ctx.capacity.on(listener);
  }

  /**
   * Forwards a stop to the worker running `ref`. Returns `forwarded` (a worker has it),
   * `pending` (still on its dispatch queue: the dispatcher removes it) or `unknown`.
   */
  cancel(ref: RunRef, root: RunRef = ref): 'forwarded' | 'pending' | 'unknown' {
    return this.#rooms.tracker.cancel(ref, root);
  }

  /**
   * Ends a run that never reached a worker (dequeued or stopped while on its dispatch queue):
   * writes its final record and forgets it.
   */
  async finishUnclaimed(
    ref: RunRef,
    status: RunStatus,
    error: string,
    root: RunRef = ref,
  ): Promise<boolean> {
    return this.#rooms.tracker.finishUnclaimed(ref, status, error, root);
  }

  /**
   * Publishes this coordinator's workers and reads the other coordinators' (sharing one Redis)
   * now, as the background sync does every `fleetSyncMs`. Exposed for tests.
   */
  async syncFleet(): Promise<void> {
    await this.#fleet?.sync();
  }

  /** Resolves once the store work the heartbeats so far started is done (stop waits for it). */
  async heartbeatsSettled(): Promise<void> {
    await this.#reconcile.settled();
  }

  /**
   * The lost-worker rule: each run of a worker silent for longer than the threshold is marked
   * failed with an error naming the worker; its slot frees at once. Exposed for tests.
   */
  async sweepLostWorkers(): Promise<void> {
    await this.#lost.sweep();
  }
}
