import type { Clock } from '@trellis/core';
import {
  isUnavailable,
  type CoordinatorClient,
  type LogChunk,
  type StatusReport,
} from '@trellis/coordinator';

type Item =
  | { readonly kind: 'status'; report: StatusReport; readonly final: boolean }
  | { readonly kind: 'log'; chunk: LogChunk };

/** Log chunks sent on one stream at most (bytes). */
const BATCH_BYTES = 2 * 1024 * 1024;
/** A queued log item grows by appending until this size. */
const ITEM_BYTES = 256 * 1024;
/**
 * A report of a run still going waits this long, so a later report (each is the complete record)
 * can replace it: short runs cost the coordinator a few store writes, not one per state change.
 */
const SETTLE_MS = 20;

/** What the outbox needs. */
export interface OutboxDeps {
  readonly client: () => CoordinatorClient;
  readonly clock: Clock;
  readonly warn: (m: string) => void;
  /** The coordinator no longer gives this run to this worker: stop it. */
  readonly onDropped: (runKey: string) => void;
  /** Called when delivery fails for want of a coordinator, and again once it works. */
  readonly onConnectivity?: (up: boolean) => void;
}

/** One run's queue: delivered in order by its own pump. */
interface Lane {
  readonly items: Item[];
  /** How many items at the head are in a call now. */
  sending: number;
  pumping: boolean;
}

/**
 * Everything a worker sends about its runs: status reports and log chunks wait here while the
 * coordinator is away (the runs go on) and are delivered after it is back (docs/architecture.md,
 * "Distributed mode"). Each run has its own ordered lane, delivered independently of the others
 * (runs do not wait behind each other); within a run a status report goes only after every log
 * chunk queued before it, so a final status never overtakes the run's last lines.
 */
export class Outbox {
  readonly #deps: OutboxDeps;
  readonly #lanes = new Map<string, Lane>();
  readonly #idle = new Set<() => void>();
  #stopped = false;
  #up = true;

  constructor(deps: OutboxDeps) {
    this.#deps = deps;
  }

  /** Kept for symmetry with other components: lanes start pumping as items arrive. */
  start(): void {
    this.#stopped = false;
  }

  /** Items waiting, over all runs. */
  get size(): number {
    let n = 0;
    for (const l of this.#lanes.values()) n += l.items.length;
    return n;
  }

  /** Queues a status report; `final` ones (the run ended) go without waiting. */
  status(runKey: string, report: StatusReport, final = false): void {
    this.#push(runKey, { kind: 'status', report, final });
  }

  log(runKey: string, chunk: LogChunk): void {
    const lane = this.#lanes.get(runKey);
    const last = lane?.items.at(-1);
    // Contiguous bytes of the same file join the queued item (fewer, larger messages).
    if (
      lane &&
      last?.kind === 'log' &&
      lane.items.length > lane.sending &&
      last.chunk.path === chunk.path &&
      last.chunk.offset + last.chunk.data.length === chunk.offset &&
      last.chunk.data.length < ITEM_BYTES
    ) {
      last.chunk = { ...last.chunk, data: Buffer.concat([last.chunk.data, chunk.data]) };
      return;
    }
    this.#push(runKey, { kind: 'log', chunk });
  }

  /** Forgets what is queued for a run (it was dropped); items in a call now finish. */
  discard(runKey: string): void {
    const lane = this.#lanes.get(runKey);
    if (lane) lane.items.splice(lane.sending);
  }

  /** Resolves once everything queued so far was delivered (or `signal` aborts). */
  async drained(signal?: AbortSignal): Promise<void> {
    if (this.size === 0) return;
    const idle = new Promise<void>((resolve) => this.#idle.add(resolve));
    if (!signal) return idle;
    await Promise.race([
      idle,
      new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true })),
    ]);
  }

  /** Stops delivering (what is left stays undelivered). */
  stop(): Promise<void> {
    this.#stopped = true;
    return Promise.resolve();
  }

  #push(runKey: string, item: Item): void {
    let lane = this.#lanes.get(runKey);
    if (!lane) this.#lanes.set(runKey, (lane = { items: [], sending: 0, pumping: false }));
    lane.items.push(item);
    if (!lane.pumping) {
      lane.pumping = true;
      void this.#pump(runKey, lane);
    }
  }

  async #pump(runKey: string, lane: Lane): Promise<void> {
    let backoff = 100;
    while (!this.#stopped) {
      const head = lane.items[0];
      if (!head) break;
      try {
        if (head.kind === 'status') {
          if (!head.final && !lane.items.some((it, i) => i > 0 && it.kind === 'status')) {
            await this.#deps.clock.sleep(SETTLE_MS).catch(() => undefined);
          }
          // Each report is the complete record: a later one in the lane replaces this one (the
          // log chunks between them still go first, as they precede the later report).
          const later = lane.items.find((it, i) => i > 0 && it.kind === 'status');
          if (later?.kind === 'status') {
            // A child run's first report carries its DAG snapshot: the replacement takes it over.
            if (head.report.snapshotJson !== '' && later.report.snapshotJson === '')
              later.report = { ...later.report, snapshotJson: head.report.snapshotJson };
            lane.items.shift();
            continue;
          }
          const report = head;
          lane.sending = 1;
          const ack = await this.#deps.client().report(report.report);
          lane.sending = 0;
          lane.items.shift();
          if (ack.dropped) {
            this.discard(runKey);
            this.#deps.onDropped(runKey);
          }
        } else {
          let n = 0;
          let bytes = 0;
          for (const it of lane.items) {
            if (it.kind !== 'log' || bytes >= BATCH_BYTES) break;
            n++;
            bytes += it.chunk.data.length;
          }
          lane.sending = n;
          const chunks = lane.items.slice(0, n).map((it) => (it as { chunk: LogChunk }).chunk);
          await this.#deps.client().sendLogs(chunks);
          lane.sending = 0;
          lane.items.splice(0, n);
        }
        this.#connectivity(true);
        backoff = 100;
      } catch (e) {
        lane.sending = 0;
        if (isUnavailable(e)) {
          this.#connectivity(false);
          await this.#deps.clock.sleep(backoff).catch(() => undefined);
          backoff = Math.min(backoff * 2, 2_000);
          continue;
        }
        // A message the coordinator refuses (bad argument) would block everything behind it.
        this.#deps.warn(`coordinator refused a ${head.kind} message: ${(e as Error).message}`);
        lane.items.shift();
      }
    }
    lane.pumping = false;
    if (lane.items.length === 0) this.#lanes.delete(runKey);
    if (this.size === 0) {
      for (const r of this.#idle) r();
      this.#idle.clear();
    }
  }

  #connectivity(up: boolean): void {
    if (this.#up === up) return;
    this.#up = up;
    this.#deps.onConnectivity?.(up);
  }
}
