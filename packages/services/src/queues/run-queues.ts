import type { RunRef } from '@trellis/spec';
import type { QueueInfo } from './queue-of.js';

/** spec: the scheduler discards a queued item whose run does not become active within 10 s. */
export const ACTIVATION_LIMIT_MS = 10_000;

/** A run waiting in a queue, in FIFO order. */
export interface WaitingRun {
  readonly ref: RunRef;
  /** `queuedAt` of the run (ISO); FIFO order is by this, then by id. */
  readonly queuedAt: string;
  /** The DAG's workerSelector (empty: runs in this process). */
  readonly selector: Readonly<Record<string, string>>;
}

/** What happened when a waiting run was handed on. */
export type Activation =
  /** It runs in this process now. */
  | { readonly kind: 'running' }
  /** It is on a worker's queue; it counts as activating until a worker reports it running. */
  | { readonly kind: 'dispatched' }
  /** It is no longer queued (dequeued, deleted, failed to start): its slot is free again. */
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
  /**
   * False for a ledger that only decides (built from the store in a process that does not run
   * the queues): it never hands slots on. @default true
   */
  readonly activates?: boolean;
}

const keyOf = (r: RunRef): string => `${r.name}/${r.dagRunId}`;

/** FIFO order: queuedAt, then run id (UUIDv7 ids of one millisecond sort by creation). */
const before = (a: WaitingRun, b: WaitingRun): boolean =>
  a.queuedAt < b.queuedAt || (a.queuedAt === b.queuedAt && a.ref.dagRunId < b.ref.dagRunId);

interface Waiting {
  readonly run: WaitingRun;
  /** Placed, but its record is still being written: the queue waits at it. */
  pending: boolean;
}

interface QueueState {
  /** Runs holding a slot: running, or activated and not yet running (with their deadline). */
  readonly active: Map<string, { readonly ref: RunRef; deadline?: number }>;
  readonly waiting: Waiting[];
  /** Active runs allowed at once, as last declared (config, or the DAG's maxActiveRuns). */
  capacity: number;
}

/**
 * The admission ledger of the process that runs the queues (docs/architecture.md, "The path of a run"): per queue,
 * the runs holding a slot and the runs waiting, in strict FIFO order. Decisions are synchronous
 * against this ledger, so two concurrent starts can never both take the last slot; a place in the
 * queue is reserved before the run's record is written, so nothing overtakes a run being queued;
 * a slot is handed to the next waiting run the moment it is released (event-driven, no polling).
 */
export class RunQueues {
  readonly #queues = new Map<string, QueueState>();
  /** Queue of each run the ledger knows, by run key. */
  readonly #queueOfRun = new Map<string, string>();

  constructor(private readonly deps: RunQueuesDeps) {}

  #state(q: QueueInfo): QueueState {
    let s = this.#queues.get(q.name);
    if (!s) {
      s = { active: new Map(), waiting: [], capacity: q.capacity };
      this.#queues.set(q.name, s);
    }
    s.capacity = q.capacity;
    return s;
  }

  /** The capacity last declared for a queue the ledger holds runs of. */
  capacityOf(queue: string): number | undefined {
    return this.#queues.get(queue)?.capacity;
  }

  /** True when the run holds a slot or waits in a queue of this ledger. */
  knows(ref: RunRef): boolean {
    return this.#queueOfRun.has(keyOf(ref));
  }

  /** True when a run of DAG `dagName` holds a slot of queue `queue` (singleton starts). */
  hasActiveOf(queue: string, dagName: string): boolean {
    const s = this.#queues.get(queue);
    return s !== undefined && [...s.active.values()].some((a) => a.ref.name === dagName);
  }

  /**
   * Takes a slot for a run that starts now, when the queue has room and nobody waits in it
   * (strict FIFO: a start never overtakes a waiting run). Returns false when it must wait.
   * The caller checks {@link knows} first (a known run is a duplicate id).
   */
  tryOccupy(q: QueueInfo, ref: RunRef): boolean {
    const s = this.#state(q);
    if (s.waiting.length > 0 || s.active.size >= s.capacity) return false;
    this.#hold(s, q.name, ref);
    return true;
  }

  /**
   * Records a run that holds a slot without admission (found running by a reconcile, or
   * dispatched with an activation `deadline`). The queue's capacity is declared by `q`, as by
   * every other entry: a queue first met through an adopted run is never left at a guess.
   */
  occupy(q: QueueInfo, ref: RunRef, deadline?: number): void {
    this.#hold(this.#state(q), q.name, ref, deadline);
  }

  #hold(s: QueueState, queue: string, ref: RunRef, deadline?: number): void {
    const key = keyOf(ref);
    s.active.set(key, deadline === undefined ? { ref } : { ref, deadline });
    this.#queueOfRun.set(key, queue);
  }

  /**
   * Reserves the run's place in FIFO order before its record exists; the queue waits at it until
   * {@link ready} (or {@link release} when creating the record failed).
   */
  reserve(q: QueueInfo, run: WaitingRun): void {
    this.#place(this.#state(q), q.name, run, true);
  }

  /** The reserved run's record is written: it may now leave the queue in its turn. */
  ready(ref: RunRef): void {
    const q = this.#queueOfRun.get(keyOf(ref));
    const w = q === undefined ? undefined : this.#find(q, keyOf(ref));
    if (!w || q === undefined) return;
    w.pending = false;
    this.pump(q);
  }

  /** Adds a waiting run whose record exists (a reconcile found it) in FIFO order. */
  enqueue(q: QueueInfo, run: WaitingRun): void {
    const s = this.#state(q);
    if (this.#place(s, q.name, run, false)) this.pump(q.name);
  }

  #place(s: QueueState, queue: string, run: WaitingRun, pending: boolean): boolean {
    const key = keyOf(run.ref);
    if (this.#queueOfRun.has(key)) return false;
    let i = s.waiting.length;
    while (i > 0 && before(run, (s.waiting[i - 1] as Waiting).run)) i--;
    s.waiting.splice(i, 0, { run, pending });
    this.#queueOfRun.set(key, queue);
    return true;
  }

  #find(queue: string, key: string): Waiting | undefined {
    return this.#queues.get(queue)?.waiting.find((w) => keyOf(w.run.ref) === key);
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
      const i = s.waiting.findIndex((w) => keyOf(w.run.ref) === key);
      if (i >= 0) s.waiting.splice(i, 1);
    }
    this.pump(q);
    if (s.active.size === 0 && s.waiting.length === 0) this.#queues.delete(q);
  }

  /** True when the run left its queue and is not running yet (it has an activation deadline). */
  isActivating(key: string): boolean {
    const q = this.#queueOfRun.get(key);
    return q !== undefined && this.#queues.get(q)?.active.get(key)?.deadline !== undefined;
  }

  /** Runs waiting (with their records written), for a reconcile against the store. */
  waitingRuns(): RunRef[] {
    return [...this.#queues.values()].flatMap((s) =>
      s.waiting.filter((w) => !w.pending).map((w) => w.run.ref),
    );
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
    for (const name of [...this.#queues.keys()]) this.pump(name);
  }

  /** Hands the free slots of a queue to its waiting runs, head first. */
  pump(name: string): void {
    const s = this.#queues.get(name);
    if (!s || this.deps.activates === false) return;
    while (s.waiting.length > 0 && s.active.size < s.capacity) {
      const head = s.waiting[0] as Waiting;
      if (head.pending) return; // its record is being written; nobody overtakes it
      const sel = head.run.selector;
      // strict FIFO: a head waiting for a worker holds up the runs behind it
      if (Object.keys(sel).length > 0 && this.deps.blockedBy(sel) !== null) return;
      s.waiting.shift();
      const run = head.run;
      this.#hold(s, name, run.ref, this.deps.nowMs() + ACTIVATION_LIMIT_MS);
      this.deps.activate(run).then(
        (a) => {
          if (a.kind === 'running') this.markRunning(run.ref);
          else if (a.kind === 'gone') this.release(run.ref);
        },
        (e: unknown) => {
          this.deps.warn(
            `run ${run.ref.dagRunId} of DAG "${run.ref.name}" could not leave queue "${name}": ${(e as Error).message}`,
          );
          this.release(run.ref);
        },
      );
    }
  }
}
