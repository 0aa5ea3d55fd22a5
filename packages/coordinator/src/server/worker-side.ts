import {
  canonicalSelector,
  matchesSelector,
  selectorOfQueue,
  type Labels,
} from '../registry/selector.js';
import type { RunningTask, WorkerState, WorkerView } from '../registry/worker-registry.js';
import type {
  DeregisterAck,
  DeregisterRequest,
  HeartbeatRequest,
  HeartbeatResponse,
  RunRefMsg,
} from '../wire/messages.js';
import type { SharedFleet } from '../fleet/shared-fleet.js';
import type { RemoteWorker } from '../fleet/fleet-port.js';
import { healthOf, WorkerHealth } from '../registry/worker-health.js';
import { busySlots } from './busy-slots.js';
import { forgetWorker, type CoordinatorContext } from './coordinator-context.js';
import type { HeartbeatReconcile } from './heartbeat-reconcile.js';
import { runKey } from './remote-runs.js';
import { toMsg } from './wire-refs.js';
import { COORDINATOR_FEATURES } from '../wire/protocol.js';

/**
 * The worker side of the coordinator: heartbeats into the registry (and reconciled with the runs
 * tracked for the worker), which dispatch queues each worker consumes, which runs it executes
 * but no longer owns (it must drop them), and free capacity.
 */
export class WorkerSide {
  readonly #ctx: CoordinatorContext;
  /** Names of the dispatch queues (canonical selectors) runs were put on. */
  readonly #queues = new Map<string, Labels>();

  readonly #reconcile: HeartbeatReconcile;
  /** The workers other coordinators hear (undefined: this coordinator shares no view). */
  fleet: SharedFleet | undefined;

  constructor(ctx: CoordinatorContext, reconcile: HeartbeatReconcile) {
    this.#ctx = ctx;
    this.#reconcile = reconcile;
  }

  /**
   * Workers as `GET /workers` shows them: this coordinator's, and those other coordinators heard
   * more recently (sharing one Redis), sorted by id.
   */
  list(): WorkerView[] {
    const now = this.#ctx.deps.clock.now();
    const local = this.#ctx.registry.list(now);
    const others = this.fleet?.others() ?? [];
    if (others.length === 0) return local;
    const byId = new Map(local.map((w) => [w.id, w]));
    for (const r of others) byId.set(r.id, viewOf(r, now));
    return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Makes a dispatch queue known, so matching workers are told to consume it. */
  addQueue(name: string): void {
    if (this.#queues.has(name)) return;
    const selector = selectorOfQueue(name);
    this.#queues.set(name, selector);
    // Matching workers start consuming at once, not at their next heartbeat.
    for (const w of this.#ctx.registry.eligible(selector, this.#ctx.deps.clock.now()))
      this.#ctx.commands.push(w.id, { kind: 'KIND_CONSUME', run: null, queue: name });
  }

  /**
   * Null when a worker can take a run with `selector` now: healthy matching workers have more
   * free slots than runs already dispatched to them and not yet claimed. Otherwise why not.
   */
  availability(selector: Labels): string | null {
    const now = this.#ctx.deps.clock.now();
    const local = this.#ctx.registry.eligible(selector, now);
    const here = new Set(local.map((w) => w.id));
    const remote = this.#remoteEligible(selector, now).filter((w) => !here.has(w.id));
    const eligible = [...local, ...remote];
    if (eligible.length === 0) {
      const sel = canonicalSelector(selector);
      return sel === 'any'
        ? 'no healthy worker is connected'
        : `no healthy worker has labels ${sel}`;
    }
    let free = 0;
    for (const w of local) free += Math.max(0, w.capacity - busySlots(this.#ctx, w.id));
    for (const w of remote) free += Math.max(0, w.capacity - w.busy);
    // Runs dispatched (here, or by another coordinator as of the last sync) and not yet claimed
    // will take slots of these workers.
    const selectors = [
      ...this.#ctx.runs.pending().map((p) => p.selector),
      ...(this.fleet?.pendingElsewhere() ?? []),
    ];
    const pending = selectors.filter((s) =>
      eligible.some((w) => matchesSelector(w.labels, s)),
    ).length;
    if (free - pending > 0) return null;
    return `every worker matching ${canonicalSelector(selector)} is busy`;
  }

  /** A heartbeat: recorded; answered with the queues to consume, stops and runs to drop. */
  heartbeat(req: HeartbeatRequest): HeartbeatResponse {
    const { deps, registry } = this.#ctx;
    const now = deps.clock.now();
    if (req.workerId === '') throw new Error('heartbeat without worker_id');
    const listed = req.runningTasks.map((t) => ({
      dagName: t.run?.name ?? '',
      dagRunId: t.run?.dagRunId ?? '',
      rootDagRunName: t.root?.name ?? t.run?.name ?? '',
      rootDagRunId: t.root?.dagRunId ?? t.run?.dagRunId ?? '',
      parentDagRunName: t.parent?.name ?? '',
      parentDagRunId: t.parent?.dagRunId ?? '',
      startedAt: t.startedAt,
    }));
    const tasks = this.#ctx.reported.heard(req.workerId, listed);
    const change = registry.heartbeat(
      {
        id: req.workerId,
        labels: { ...req.labels },
        capacity: req.capacity,
        runningTasks: tasks,
        incarnation: req.incarnation,
        accepting: req.accepting,
        version: req.version ?? '',
        host: req.host ?? '',
        startedAt: req.startedAt ?? '',
        slotsBusy: req.slotsBusy ?? 0,
        state: req.state ?? '',
      },
      now,
    );
    this.#reconcile.onHeartbeat(req.workerId, req.incarnation, tasks);
    const drop = this.#toDrop(req.workerId, tasks);
    if (change.joined || change.grew) this.#ctx.capacity.changed();
    if (change.joined)
      deps.onWorkerChange?.({ kind: 'joined', workerId: req.workerId, labels: { ...req.labels } });
    return {
      queues: [...this.#queues.entries()]
        .filter(([, sel]) => matchesSelector(req.labels, sel))
        .map(([q]) => q),
      cancel: this.#ctx.commands.due(req.workerId).map((c) => c.run as RunRefMsg),
      drop,
      logDir: deps.logDir,
      adminState: registry.adminStateOf(req.workerId) ?? '',
      features: [...COORDINATOR_FEATURES],
    };
  }

  /**
   * An operator's cordon, drain or uncordon (`active`) of a known worker: told to it at once on
   * its command stream and in every heartbeat reply. Undefined for an unknown worker.
   */
  setState(id: string, state: WorkerState): WorkerView | undefined {
    const { registry } = this.#ctx;
    if (registry.get(id) === undefined) return undefined;
    registry.setAdminState(id, state === 'active' ? undefined : state);
    this.#ctx.commands.push(id, { kind: 'KIND_STATE', run: null, queue: '', state });
    if (state === 'active') this.#ctx.capacity.changed();
    return this.list().find((w) => w.id === id);
  }

  /**
   * An operator's cordon, drain or uncordon from the API: applied here to a worker this
   * coordinator hears freshest, else handed on to the live coordinator that hears it (sharing
   * one Redis), which applies it at its next sync. The worker as it is or will be, and whether it
   * was handed on; undefined for a worker no coordinator knows.
   */
  async request(
    id: string,
    state: WorkerState,
  ): Promise<{ worker: WorkerView; handedOn: boolean } | undefined> {
    const local = this.#ctx.registry.get(id);
    const fresher =
      local === undefined || local.assumed === true
        ? this.fleet?.heardAfter(id, -Infinity)
        : this.fleet?.heardAfter(id, local.lastHeartbeat.getTime());
    if (fresher === undefined) {
      const worker = this.setState(id, state);
      if (worker !== undefined) await this.fleet?.supersede(id);
      return worker && { worker, handedOn: false };
    }
    const remote = await this.fleet?.handOn(id, state);
    if (remote === undefined) return undefined;
    return { worker: viewOf(remote, this.#ctx.deps.clock.now()), handedOn: true };
  }

  /** A worker that exited after a graceful stop: forgotten unless it still has runs here. */
  deregister(req: DeregisterRequest): DeregisterAck {
    const w = this.#ctx.registry.get(req.workerId);
    if (w === undefined) return { forgotten: true };
    if (w.incarnation !== req.incarnation || this.#ctx.runs.ofWorker(req.workerId).length > 0)
      return { forgotten: false };
    forgetWorker(this.#ctx, req.workerId);
    return { forgotten: true };
  }

  /** Runs the worker executes that the coordinator no longer gives it: it must drop them. */
  #toDrop(workerId: string, tasks: readonly RunningTask[]): RunRefMsg[] {
    const drop: RunRefMsg[] = [];
    for (const t of tasks) {
      const ref = { name: t.dagName, dagRunId: t.dagRunId };
      const root = { name: t.rootDagRunName, dagRunId: t.rootDagRunId };
      const run = this.#ctx.runs.get(ref, root);
      const key = runKey(ref, root);
      if (this.#ctx.dropped.has(workerId, key) || (run !== undefined && run.workerId !== workerId))
        drop.push(toMsg(ref));
    }
    return drop;
  }

  /** Healthy active workers other coordinators hear that take work and match `selector`. */
  #remoteEligible(selector: Labels, now: Date): RemoteWorker[] {
    if (this.fleet === undefined) return [];
    return this.fleet
      .others()
      .filter(
        (w) =>
          w.accepting &&
          w.state === 'active' &&
          healthOf(new Date(w.lastHeartbeatMs), now) === WorkerHealth.Healthy &&
          matchesSelector(w.labels, selector),
      );
  }
}

/** A worker another coordinator hears, as `GET /workers` shows it. */
const viewOf = (r: RemoteWorker, now: Date): WorkerView => {
  const lastHeartbeat = new Date(r.lastHeartbeatMs);
  return {
    id: r.id,
    labels: r.labels,
    health: healthOf(lastHeartbeat, now),
    lastHeartbeat,
    runningTasks: [...r.runningTasks],
    capacity: r.capacity,
    version: r.version,
    host: r.host,
    startedAt: r.startedAt,
    slotsBusy: r.slotsBusy,
    state: r.state,
  };
};
