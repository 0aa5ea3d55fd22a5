import type { Clock } from '@trellis/core';
import {
  isUnavailable,
  type CoordinatorClient,
  type LogChunk,
  type StatusReport,
} from '@trellis/coordinator';

type Item =
  | { readonly kind: 'status'; readonly runKey: string; readonly report: StatusReport }
  | { readonly kind: 'log'; readonly runKey: string; chunk: LogChunk };

/** Log chunks sent on one stream at most (bytes). */
const BATCH_BYTES = 2 * 1024 * 1024;
/** A log item grows by appending until this size. */
const ITEM_BYTES = 256 * 1024;

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

/**
 * Everything a worker sends about its runs, in order: status reports and log chunks wait here
 * while the coordinator is away (the runs go on) and are delivered after it is back (ARCHITECTURE
 * section 3; issue 6 item 3). A status report goes only after every log chunk queued before it,
 * so a final status never overtakes the run's last lines.
 */
export class Outbox {
  readonly #deps: OutboxDeps;
  readonly #items: Item[] = [];
  #wake: (() => void) | undefined;
  #idle: { promise: Promise<void>; resolve: () => void } | undefined;
  #stopped = false;
  #loop: Promise<void> | undefined;
  #up = true;

  constructor(deps: OutboxDeps) {
    this.#deps = deps;
  }

  start(): void {
    this.#loop ??= this.#pump();
  }

  get size(): number {
    return this.#items.length;
  }

  status(runKey: string, report: StatusReport): void {
    this.#push({ kind: 'status', runKey, report });
  }

  log(runKey: string, chunk: LogChunk): void {
    const last = this.#items.at(-1);
    // Contiguous bytes of the same file join the queued item (fewer, larger messages).
    if (
      last?.kind === 'log' &&
      last.chunk.path === chunk.path &&
      last.chunk.offset + last.chunk.data.length === chunk.offset &&
      last.chunk.data.length < ITEM_BYTES &&
      this.#items.length > this.#sending
    ) {
      last.chunk = { ...last.chunk, data: Buffer.concat([last.chunk.data, chunk.data]) };
      return;
    }
    this.#push({ kind: 'log', runKey, chunk });
  }

  /** Forgets what is queued for a run (it was dropped). */
  discard(runKey: string): void {
    // Items being sent stay: the pump removes them by count when their call returns.
    for (let i = this.#items.length - 1; i >= this.#sending; i--) {
      if (this.#items[i]?.runKey === runKey) this.#items.splice(i, 1);
    }
  }

  /** Resolves once everything queued so far was delivered (or `signal` aborts). */
  async drained(signal?: AbortSignal): Promise<void> {
    if (this.#items.length === 0) return;
    this.#idle ??= (() => {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      return { promise, resolve };
    })();
    if (!signal) return this.#idle.promise;
    await Promise.race([
      this.#idle.promise,
      new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true })),
    ]);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#loop;
  }

  /** How many items at the head are in a call now. */
  #sending = 0;

  #push(item: Item): void {
    this.#items.push(item);
    this.#wake?.();
  }

  async #pump(): Promise<void> {
    let backoff = 100;
    while (!this.#stopped) {
      const head = this.#items[0];
      if (!head) {
        this.#idle?.resolve();
        this.#idle = undefined;
        await new Promise<void>((r) => (this.#wake = r));
        this.#wake = undefined;
        continue;
      }
      try {
        if (head.kind === 'status') {
          this.#sending = 1;
          const ack = await this.#deps.client().report(head.report);
          this.#sending = 0;
          this.#items.shift();
          if (ack.dropped) {
            this.discard(head.runKey);
            this.#deps.onDropped(head.runKey);
          }
        } else {
          const batch: Item[] = [];
          let bytes = 0;
          for (const it of this.#items) {
            if (it.kind !== 'log' || bytes >= BATCH_BYTES) break;
            batch.push(it);
            bytes += it.chunk.data.length;
          }
          this.#sending = batch.length;
          await this.#deps.client().sendLogs(batch.map((b) => (b as { chunk: LogChunk }).chunk));
          this.#sending = 0;
          this.#items.splice(0, batch.length);
        }
        if (!this.#up) {
          this.#up = true;
          this.#deps.onConnectivity?.(true);
        }
        backoff = 100;
      } catch (e) {
        this.#sending = 0;
        if (isUnavailable(e)) {
          if (this.#up) {
            this.#up = false;
            this.#deps.onConnectivity?.(false);
          }
          await this.#deps.clock.sleep(backoff).catch(() => undefined);
          backoff = Math.min(backoff * 2, 2_000);
          continue;
        }
        // A message the coordinator refuses (bad argument) would block everything behind it.
        this.#deps.warn(`coordinator refused a ${head.kind} message: ${(e as Error).message}`);
        this.#items.shift();
      }
    }
  }
}
