import type { RunningTask, WorkerInfo } from '@trellis/contract';
import type { Labels } from './selector.js';
import { matchesSelector } from './selector.js';
import { healthOf, WorkerHealth } from './worker-health.js';

/** A run a worker reports as executing (spec: Worker `running_tasks`); the contract defines it. */
export type { RunningTask };

/** What the coordinator knows of one worker. */
export interface WorkerEntry {
  readonly id: string;
  labels: Labels;
  capacity: number;
  lastHeartbeat: Date;
  runningTasks: RunningTask[];
  incarnation: string;
  /** False while the worker drains (SIGTERM) and takes no new runs. */
  accepting: boolean;
  /** What the worker last said of itself ('' from workers before these fields). */
  version: string;
  host: string;
  startedAt: string;
  slotsBusy: number;
  /** The state the worker reports (`active`, `draining`, `cordoned`; '' when unsaid). */
  state: string;
  /** Known only from the store (its runs), not heard yet (see `assume`). */
  assumed?: boolean;
}

type Described = 'version' | 'host' | 'startedAt' | 'slotsBusy' | 'state';

/** A heartbeat as the registry takes it (what a worker says of itself is optional). */
export type HeartbeatInput = Omit<WorkerEntry, 'lastHeartbeat' | Described> &
  Partial<Pick<WorkerEntry, Described>>;

/** A worker's lifecycle state (beside the spec's health). */
export type WorkerState = 'active' | 'draining' | 'cordoned';

/** What an operator asked of a worker (`trellis worker cordon|drain`). */
export type AdminState = Exclude<WorkerState, 'active'>;

/** A worker as `GET /workers` shows it (the api maps it to snake_case), with its capacity. */
export interface WorkerView extends WorkerInfo {
  readonly labels: Labels;
  readonly capacity: number;
  readonly version: string;
  readonly host: string;
  readonly startedAt: string;
  readonly slotsBusy: number;
  readonly state: WorkerState;
}

/** Workers unhealthy for this long are forgotten (they no longer show in `GET /workers`). */
export const FORGET_AFTER_MS = 10 * 60_000;

/**
 * The in-memory worker registry of a coordinator: the last heartbeat of each worker. Health is
 * computed on read from heartbeat age, never stored.
 */
export class WorkerRegistry {
  readonly #workers = new Map<string, WorkerEntry>();
  /** Cordons and drains operators asked for, by worker id (kept in memory). */
  readonly #admin = new Map<string, AdminState>();

  /**
   * Records a heartbeat. Returns what changed for capacity: `joined` (new, back from
   * unhealthy, or a new incarnation) or `grew` (more capacity or accepting again).
   */
  heartbeat(beat: HeartbeatInput, now: Date): { joined: boolean; grew: boolean } {
    const hb = { version: '', host: '', startedAt: '', slotsBusy: 0, state: '', ...beat };
    const prev = this.#workers.get(hb.id);
    if (prev === undefined) {
      this.#workers.set(hb.id, { ...hb, lastHeartbeat: now });
      return { joined: true, grew: false };
    }
    const joined =
      healthOf(prev.lastHeartbeat, now) === WorkerHealth.Unhealthy ||
      prev.incarnation !== hb.incarnation;
    const grew =
      hb.capacity > prev.capacity ||
      (hb.accepting && !prev.accepting) ||
      hb.runningTasks.length < prev.runningTasks.length;
    // Updated in place: 1,000 workers beat every second.
    prev.labels = hb.labels;
    prev.capacity = hb.capacity;
    prev.runningTasks = hb.runningTasks;
    prev.incarnation = hb.incarnation;
    prev.accepting = hb.accepting;
    prev.version = hb.version;
    prev.host = hb.host;
    prev.startedAt = hb.startedAt;
    prev.slotsBusy = hb.slotsBusy;
    prev.state = hb.state;
    prev.lastHeartbeat = now;
    prev.assumed = false;
    return { joined, grew };
  }

  /** Marks a worker known without a heartbeat yet (its runs were found in the store at start). */
  assume(id: string, since: Date): void {
    if (this.#workers.has(id)) return;
    this.#workers.set(id, {
      id,
      labels: {},
      capacity: 0,
      lastHeartbeat: since,
      runningTasks: [],
      incarnation: '',
      accepting: false,
      version: '',
      host: '',
      startedAt: '',
      slotsBusy: 0,
      state: '',
      assumed: true,
    });
  }

  /** Every known worker, in no particular order. */
  all(): WorkerEntry[] {
    return [...this.#workers.values()];
  }

  get(id: string): WorkerEntry | undefined {
    return this.#workers.get(id);
  }

  healthOf(id: string, now: Date): WorkerHealth | undefined {
    const w = this.#workers.get(id);
    return w ? healthOf(w.lastHeartbeat, now) : undefined;
  }

  /** Every known worker, sorted by id, with its health at `now`. */
  list(now: Date): WorkerView[] {
    return [...this.#workers.values()]
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((w) => ({
        id: w.id,
        labels: w.labels,
        health: healthOf(w.lastHeartbeat, now),
        lastHeartbeat: w.lastHeartbeat,
        runningTasks: w.runningTasks,
        capacity: w.capacity,
        version: w.version,
        host: w.host,
        startedAt: w.startedAt,
        slotsBusy: w.slotsBusy,
        state: this.stateOf(w),
      }));
  }

  /** The worker's state: draining when it says so, else what an operator asked, else its own. */
  stateOf(w: WorkerEntry): WorkerState {
    if (w.state === 'draining') return 'draining';
    const admin = this.#admin.get(w.id);
    if (admin) return admin;
    return w.state === 'cordoned' ? 'cordoned' : 'active';
  }

  /** An operator's cordon or drain (`undefined`: active again). */
  adminStateOf(id: string): AdminState | undefined {
    return this.#admin.get(id);
  }

  setAdminState(id: string, state: AdminState | undefined): void {
    if (state === undefined) this.#admin.delete(id);
    else this.#admin.set(id, state);
  }

  /** Healthy workers that take work and whose labels satisfy `selector`. */
  eligible(selector: Labels, now: Date): WorkerEntry[] {
    return [...this.#workers.values()].filter(
      (w) =>
        w.accepting &&
        this.stateOf(w) === 'active' &&
        healthOf(w.lastHeartbeat, now) === WorkerHealth.Healthy &&
        matchesSelector(w.labels, selector),
    );
  }

  /** Workers whose last heartbeat is older than `ms`. */
  silentFor(ms: number, now: Date): WorkerEntry[] {
    const cutoff = now.getTime() - ms;
    return [...this.#workers.values()].filter((w) => w.lastHeartbeat.getTime() < cutoff);
  }

  forget(id: string): void {
    this.#workers.delete(id);
    this.#admin.delete(id);
  }

  get size(): number {
    return this.#workers.size;
  }
}
