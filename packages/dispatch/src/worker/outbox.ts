import type { Clock } from '@trellis/core';
import type { CoordinatorClient, LogChunk, StatusReport } from '@trellis/coordinator/client';
import { OutboxJournal, type OutboxMessage } from './outbox-journal.js';
import {
  describeItem,
  foldStatuses,
  hasLaterStatus,
  joinLog,
  newLane,
  oldestIdOfLanes,
  sendHead,
  settleHead,
  takeRefused,
  type Delivered,
  type Lane,
  type LogHold,
} from './outbox-lane.js';
import { OutageLog } from './outbox-outage.js';
import {
  DEFAULT_OUTBOX_MAX_BYTES,
  DELIVERY_RETRY,
  LOG_HOLD_MS,
  failureKind,
  retryDelayMs,
} from './outbox-policy.js';
import { SentWaiters } from './outbox-sent.js';
import { OutboxSpace } from './outbox-space.js';

/** What the outbox needs. */
export interface OutboxDeps {
  readonly client: () => CoordinatorClient;
  readonly clock: Clock;
  /** Directory of the journal, under the worker's home; one worker process uses it at a time. */
  readonly dir: string;
  /** Bytes of messages held at most before step output waits. @default 64 MiB */
  readonly maxBytes?: number;
  /** One line per outage (when it starts, and when its backlog was delivered). */
  readonly log: (line: string) => void;
  readonly warn: (m: string) => void;
  /** The coordinator no longer gives this run to this worker: stop it. */
  readonly onDropped: (runKey: string) => void;
  /** For the back-off's jitter. @default Math.random */
  readonly random?: () => number;
}

/**
 * Everything a worker sends about its runs (docs/architecture.md, "Distributed mode";
 * docs/decisions.md, "Worker outbox"): status reports and log chunks are written to a journal on
 * disk, then delivered; they wait there while the coordinator is away (the runs go on), survive a
 * worker restart (replayed with their original sequence numbers), and are retried with back-off
 * until the coordinator takes them. Each run has its own ordered lane, delivered independently
 * of the others; within a run a status report goes only after every log chunk queued before it,
 * so a final status never overtakes the run's last lines. At the size limit step output waits.
 */
export class Outbox {
  readonly #deps: OutboxDeps;
  readonly #journal: OutboxJournal;
  readonly #space: OutboxSpace;
  readonly #outage: OutageLog;
  readonly #lanes = new Map<string, Lane>();
  readonly #idle = new Set<() => void>();
  readonly #sent = new SentWaiters();
  #stop = new AbortController();
  #started = false;
  /** Callers of `drained` waiting. */
  #flushing = 0;

  /** Opens the journal and queues what a previous process left undelivered (sent on `start`). */
  constructor(deps: OutboxDeps) {
    this.#deps = deps;
    const { journal, pending } = OutboxJournal.open(deps.dir);
    this.#journal = journal;
    this.#space = new OutboxSpace(
      deps.maxBytes ?? DEFAULT_OUTBOX_MAX_BYTES,
      () => journal.liveBytes,
    );
    this.#outage = new OutageLog(deps.log, deps.clock);
    for (const e of pending) this.#enqueue(e.runKey, e.message, e.n);
  }

  /** Starts delivering (what was replayed from the journal first). */
  start(): void {
    this.#started = true;
    if (this.#stop.signal.aborted) this.#stop = new AbortController();
    for (const [key, lane] of this.#lanes) this.#kick(key, lane);
  }

  /** Items waiting, over all runs. */
  get size(): number {
    let n = 0;
    for (const l of this.#lanes.values()) n += l.items.length;
    return n;
  }

  /** Bytes of undelivered messages in the journal. */
  get heldBytes(): number {
    return this.#journal.liveBytes;
  }

  /**
   * Queues a status report (written to the journal now, fsynced before its delivery is
   * acknowledged); a `final` one (the run ended) goes at once, with the log chunks queued before it.
   */
  status(runKey: string, report: StatusReport, final = false): void {
    this.#add(runKey, { kind: 'status', report, final }, true);
    if (!final) return;
    this.#lanes.get(runKey)?.settle?.abort();
    // its fsync starts now, while the log chunks ahead of it are delivered
    this.#journal.sync().catch(() => undefined);
  }

  /** Queues a log chunk now, whatever the size (the engine's own run log lines). */
  log(runKey: string, chunk: LogChunk): void {
    this.#add(runKey, { kind: 'log', chunk }, false);
  }

  /** Queues step output; at the size limit resolves only once delivered messages freed room. */
  output(runKey: string, chunk: LogChunk): Promise<void> {
    const room = this.#space.whenRoom(runKey, () => this.log(runKey, chunk));
    if (this.#space.waiting > 0) this.#closeStreams(); // room comes with their answers
    return room;
  }

  /**
   * Forgets what is queued for a run (it was dropped); items in a call now finish. A lane left
   * empty that no delivery pumps (the outbox stopped, or not started) is removed here and its
   * `whenSent` callers woken: no pump would ever do it.
   */
  discard(runKey: string): void {
    this.#space.release(runKey);
    const lane = this.#lanes.get(runKey);
    if (!lane) return;
    const gone = lane.items.splice(lane.sending);
    this.#journal.ack(gone.flatMap((it) => it.ids));
    if (!lane.pumping && lane.items.length === 0) {
      this.#lanes.delete(runKey);
      this.#sent.sent(runKey);
    }
    this.#removed();
  }

  /** Lets step output in beyond the size limit from now on (the worker is stopping its runs). */
  unbound(): void {
    this.#space.unbound();
  }

  /** Resolves once everything queued so far was delivered (or `signal` aborts). */
  async drained(signal?: AbortSignal): Promise<void> {
    if (this.size === 0) return;
    const idle = new Promise<void>((resolve) => this.#idle.add(resolve));
    // no log chunks are held back meanwhile
    this.#flushing++;
    this.#closeStreams();
    try {
      if (!signal) return await idle;
      await Promise.race([
        idle,
        new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true })),
      ]);
    } finally {
      this.#flushing--;
    }
  }

  /** Resolves once everything queued so far for a run was delivered (or refused, or dropped). */
  whenSent(runKey: string): Promise<void> {
    return this.#lanes.has(runKey) ? this.#sent.wait(runKey) : Promise.resolve();
  }

  /** Stops delivering and closes the journal: what is left goes after the next start. */
  stop(): Promise<void> {
    this.#started = false;
    this.#stop.abort();
    this.#space.unbound();
    this.#journal.close();
    return Promise.resolve();
  }

  #add(runKey: string, message: OutboxMessage, durable: boolean): void {
    if (this.#journal.closed) {
      this.#deps.warn(`a ${message.kind} message of ${runKey} came after the outbox closed`);
      return;
    }
    const n = this.#journal.append(runKey, message, durable);
    this.#enqueue(runKey, message, n);
    const lane = this.#lanes.get(runKey);
    lane?.held?.feed(); // joins the chunks held back, or ends their hold (a status report)
    if (lane && this.#started) this.#kick(runKey, lane);
  }

  #enqueue(runKey: string, m: OutboxMessage, n: number): void {
    let lane = this.#lanes.get(runKey);
    if (!lane) this.#lanes.set(runKey, (lane = newLane()));
    if (m.kind === 'log') {
      if (!joinLog(lane, m.chunk, n)) lane.items.push({ kind: 'log', chunk: m.chunk, ids: [n] });
    } else lane.items.push({ kind: 'status', report: m.report, final: m.final, ids: [n] });
  }

  #kick(runKey: string, lane: Lane): void {
    if (lane.pumping || lane.items.length === 0) return;
    lane.pumping = true;
    void this.#pump(runKey, lane);
  }

  async #pump(runKey: string, lane: Lane): Promise<void> {
    let attempt = 0;
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      const head = lane.items[0];
      if (!head) break;
      if (head.kind === 'status' && !head.final && !hasLaterStatus(lane))
        await settleHead(lane, this.#deps.clock, this.#stop.signal);
      try {
        foldStatuses(lane);
        if (signal.aborted) break;
        // A report's fsync runs while it travels: it is on disk before its delivery is taken as
        // done (acknowledged in the journal), not before it leaves (docs/decisions.md).
        const delivered = await sendHead(lane, this.#deps.client(), this.#hold(signal), () =>
          this.#journal.sync(),
        );
        this.#delivered(runKey, delivered);
        attempt = 0;
      } catch (e) {
        lane.sending = 0;
        if (failureKind(e) === 'refused') {
          this.#refused(lane, e as Error);
          continue;
        }
        this.#outage.failed((e as Error).message);
        const wait = retryDelayMs(attempt++, DELIVERY_RETRY, this.#deps.random ?? Math.random);
        await this.#deps.clock.sleep(wait, signal).catch(() => undefined);
      }
    }
    lane.pumping = false;
    if (lane.items.length === 0) {
      this.#lanes.delete(runKey);
      this.#sent.sent(runKey);
    }
    this.#removed();
  }

  /**
   * How log chunks are held back for the chunks that follow (LOG_HOLD_MS): not while a caller
   * waits for everything to be delivered, nor while step output waits for room.
   */
  #hold(stop: AbortSignal): LogHold {
    return {
      clock: this.#deps.clock,
      ms: LOG_HOLD_MS,
      stop,
      urgent: () => this.#flushing > 0 || this.#space.waiting > 0,
    };
  }

  /** Ends the holds of log chunks held back (they are wanted now). */
  #closeStreams(): void {
    for (const lane of this.#lanes.values()) lane.held?.close();
  }

  #delivered(runKey: string, d: Delivered): void {
    this.#journal.ack(d.ids);
    this.#outage.delivered(d.count, this.#journal.lastN);
    if (d.dropped) {
      this.discard(runKey);
      this.#deps.onDropped(runKey);
    }
    this.#removed();
  }

  /** The coordinator refused a message (it would block everything behind it): skipped. */
  #refused(lane: Lane, e: Error): void {
    const head = takeRefused(lane, e);
    if (!head) return;
    const what = describeItem(head);
    this.#deps.warn(`the coordinator refused the ${what}; it is not sent again: ${e.message}`);
    this.#journal.ack(head.ids);
    this.#removed();
  }

  /** After messages left the outbox: lets producers in, ends an outage, wakes `drained`. */
  #removed(): void {
    this.#space.freed();
    if (this.#outage.active) this.#outage.settle(oldestIdOfLanes(this.#lanes.values()));
    if (this.size > 0) return;
    for (const r of this.#idle) r();
    this.#idle.clear();
  }
}
