import { StringDecoder } from 'node:string_decoder';
import { Writable } from 'node:stream';
import type { PgLogs } from './pg-logs.js';

/**
 * Appends text to one log in the database in order, one transaction at a time: what is written
 * while an append is in flight goes out together in the next (a chatty step costs a few
 * round trips, not one per write). A failed append marks the log truncated and is reported once.
 */
export class LogAppender {
  #pending = '';
  #flushing: Promise<void> | undefined;
  #failure: string | undefined;

  constructor(
    readonly path: string,
    private readonly logs: PgLogs,
    private readonly onFailure: (path: string, e: unknown) => string,
  ) {}

  /** Why a write failed, once one did. */
  get failure(): string | undefined {
    return this.#failure;
  }

  write(text: string): void {
    if (text === '') return;
    this.#pending += text;
    this.#flushing ??= Promise.resolve().then(() => this.#drain());
  }

  /** Resolves once everything written so far is stored (or has failed). */
  async settled(): Promise<void> {
    while (this.#flushing !== undefined) await this.#flushing;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending !== '') {
        const text = this.#pending;
        this.#pending = '';
        if (this.#failure !== undefined) continue; // a log once broken stays marked truncated
        await this.logs.append(this.path, text).catch((e: unknown) => {
          this.#failure = this.onFailure(this.path, e);
          void this.logs.markTruncated(this.path, this.#failure).catch(() => undefined);
        });
      }
    } finally {
      this.#flushing = undefined;
    }
  }

  /** A byte stream into this log (a step's stdout or stderr); never errors, see `failure`. */
  stream(): Writable {
    const decoder = new StringDecoder('utf8');
    return new Writable({
      write: (chunk: Buffer | string, _enc, cb) => {
        this.write(typeof chunk === 'string' ? chunk : decoder.write(chunk));
        cb();
      },
      final: (cb) => {
        this.write(decoder.end());
        this.settled().then(() => cb(), cb);
      },
    });
  }
}
