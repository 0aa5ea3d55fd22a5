import type { RunRef } from '@trellis/spec';
import type { QueueInfo } from './queue-of.js';

/** spec: the scheduler discards a queued item whose run does not become active within 10 s. */
export const ACTIVATION_LIMIT_MS = 10_000;

/** A run waiting in a queue, in FIFO order. */
export interface WaitingRun {
  readonly ref: RunRef;
  /** `queuedAt` of the run (ISO); FIFO order is by this, then by id. */
  readonly queuedAt: string;
  /** The capacity of the queue as the run's DAG defines it (for DAG-defined queues). */
  readonly capacity: number;
  /** The DAG's workerSelector (empty: runs in this process). */
  readonly selector: Readonly<Record<string, string>>;
}

/** What happened when a waiting run was handed on. */
export type Activation =
  /** It runs in this process now. */
  | { readonly kind: 'running' }
  /** It is on a worker's queue; it counts as activating until a worker reports it running. */
  | { readonly kind: 'dispatched' }
  /** It is no longer queued (dequeued, deleted, or started elsewhere): its slot is free again. */
  | { readonly kind: 'gone' };

export interface RunQueuesDeps {
  /** Milliseconds on the injected clock. */
  readonly nowMs: () => number;
  /** Hands a waiting run on (marks it running and executes it, or dispatches it). */
  readonly activate: (run: WaitingRun) => Promise<Activation>;
  /** Why no worker can take a run with this selector now, or null (always null without workers). */
  readonly blockedBy: (selector: Readonly<Record<string, string>>) => string | null;
  /** Reports a failure of the queue machinery that no caller waits for. */
  readonly warn: (message: string) => void;
}

const keyOf = (r: RunRef): string => `${r.name}/${r.dagRunId}`;

/** FIFO order: queuedAt, then run id (UUIDv7 ids of one millisecond sort by creation). */
const before = (a: WaitingRun, b: WaitingRun): boolean =>
  a.queuedAt < b.queuedAt || (a.queuedAt === b.queuedAt && a.ref.dagRunId < b.ref.dagRunId);

interface QueueState {
  /** Runs holding a slot: running, or activated and not yet running (with their deadline). */
  readonly active: Map<string, { readonly ref: RunRef; deadline?: number }>;
  readonly waiting: WaitingRun[];
  /** The capacity last known for this queue (a custom queue's, or its DAG's). */
  capacity: number;
  /** Why the head of the queue cannot go to a worker, while it cannot. */
  blocked?: string;
}

/**
 * The admission ledger of the process that runs the queues (ARCHITECTURE.md section 2): per queue,
 * the runs holding a slot and the runs waiting, in strict FIFO order. Decisions are synchronous
 * against this ledger, so two concurrent starts can never both take the last slot; a slot is
 * handed to the next waiting run the moment it is released (event-driven, no polling).
 */
export class RunQueues {
  readonly #queues = new Map<string, QueueState>();
  /** Queue of each run the ledger knows, by run key. */
  readonly #queueOfRun = new Map<string, string>();

  constructor(private readonly deps: RunQueuesDeps) {}

  #state(name: string, capacity: number): QueueState {
    let s = this.#queues.get(name);
    if (!s) {
      s = { active: new Map(), waiting: [], capacity };
      this.#queues.set(name, s);
    }
    return s;
  }

  /**
   * Takes a slot for a run that starts now, when the queue has room and nobody waits in it
   * (strict FIFO: a start never overtakes a waiting run). Returns false when it must wait.
   */
  tryOccupy(q: QueueInfo, ref: RunRef): boolean {
    const s = this.#state(q.name, q.capacity);
    s.capacity = q.capacity;
    if (s.waiting.length > 0 || s.active.size >= q.capacity) return false;
    this.#hold(s, q.name, ref);
    return true;
  }

  /** Records a run that holds a slot without admission (found running at start or elsewhere). */
  occupy(queue: string, capacity: number, ref: RunRef, deadline?: number): void {
    const s = this.#state(queue, capacity);
    this.#hold(s, queue, ref, deadline);
  }

  #hold(s: QueueState, queue: string, ref: RunRef, deadline?: number): void {
    const key = keyOf(ref);
    s.active.set(key, deadline === undefined ? { ref } : { ref, deadline });
    this.#queueOfRun.set(key, queue);
  }

  /** Adds a waiting run in FIFO order and hands slots on. */
  enqueue(q: QueueInfo, run: WaitingRun): void {
    const s = this.#state(q.name, q.capacity);
    const key = keyOf(run.ref);
    if (this.#queueOfRun.has(key)) return;
    let i = s.waiting.length;
    while (i > 0 && before(run, s.waiting[i - 1] as WaitingRun)) i--;
    s.waiting.splice(i, 0, run);
    this.#queueOfRun.set(key, q.name);
    this.pump(q.name);
  }

  /** The run became running (a worker reported it): it keeps its slot, without a deadline. */
  markRunning(ref: RunRef): void {
    const q = this.#queueOfRun.get(keyOf(ref));
    const entry = q === undefined ? undefined : this.#queues.get(q)?.active.get(keyOf(ref));
    if (entry) delete entry.deadline;
  }

  /** The run ended or left its queue: frees its slot or its place, and hands slots on at once. */
  release(ref: RunRef): void {
    const key = keyOf(ref);
    const q = this.#queueOfRun.get(key);
    if (q === undefined) return;
    this.#queueOfRun.delete(key);
    const s = this.#queues.get(q);
    if (!s) return;
    if (!s.active.delete(key)) {
      const i = s.waiting.findIndex((w) => keyOf(w.ref) === key);
      if (i >= 0) s.waiting.splice(i, 1);
    }
    this.pump(q);
  }

  /** True when the run holds a slot or waits in a queue of this ledger. */
  knows(ref: RunRef): boolean {
    return this.#queueOfRun.has(keyOf(ref));
  }

  /** True when the run left its queue and is not running yet (it has an activation deadline). */
  isActivating(key: string): boolean {
    const q = this.#queueOfRun.get(key);
    return q !== undefined && this.#queues.get(q)?.active.get(key)?.deadline !== undefined;
  }

  /** Queue names with the runs they hold and the runs waiting (FIFO order). */
  snapshot(): { name: string; active: RunRef[]; waiting: RunRef[]; blocked?: string }[] {
    return [...this.#queues.entries()].map(([name, s]) => ({
      name,
      active: [...s.active.values()].map((a) => a.ref),
      waiting: s.waiting.map((w) => w.ref),
      ...(s.blocked !== undefined ? { blocked: s.blocked } : {}),
    }));
  }

  /** Activated runs past their deadline (not running within the activation limit). */
  overdue(): RunRef[] {
    const now = this.deps.nowMs();
    const out: RunRef[] = [];
    for (const s of this.#queues.values())
      for (const a of s.active.values())
        if (a.deadline !== undefined && a.deadline <= now) out.push(a.ref);
    return out;
  }

  /** Hands free slots of every queue on (after workers changed, or a reconcile). */
  pumpAll(): void {
    for (const name of this.#queues.keys()) this.pump(name);
  }

  /** Hands the free slots of a queue to its waiting runs, head first. */
  pump(name: string): void {
    const s = this.#queues.get(name);
    if (!s) return;
    while (s.waiting.length > 0) {
      const head = s.waiting[0] as WaitingRun;
      const capacity = head.capacity;
      if (s.active.size >= capacity) return;
      const blocked =
        Object.keys(head.selector).length > 0 ? this.deps.blockedBy(head.selector) : null;
      if (blocked !== null) {
        s.blocked = blocked;
        return; // strict FIFO: the head waits for a worker, and the others wait behind it
      }
      delete s.blocked;
      s.waiting.shift();
      this.#hold(s, name, head.ref, this.deps.nowMs() + ACTIVATION_LIMIT_MS);
      this.deps.activate(head).then(
        (a) => {
          if (a.kind === 'running') this.markRunning(head.ref);
          else if (a.kind === 'gone') this.release(head.ref);
        },
        (e: unknown) => {
          this.deps.warn(
            `run ${head.ref.dagRunId} of DAG "${head.ref.name}" could not leave queue "${name}": ${(e as Error).message}`,
          );
          this.release(head.ref);
        },
      );
    }
  }
}
