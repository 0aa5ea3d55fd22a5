import { StringDecoder } from 'node:string_decoder';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, ErrorCode } from '@trellis/core';
import { Writable } from 'node:stream';
import type { PgLogs } from './pg-logs.js';

/** How often an append is tried again while the database is away. */
const RETRY_MS = 500;
/** Text a log keeps waiting for the database at most; beyond it the log is marked truncated. */
const MAX_WAITING_CHARS = 4 * 1024 * 1024;

const isUnavailable = (e: unknown): boolean =>
  AppError.is(e) && e.code === ErrorCode.ServiceUnavailable;

/**
 * Appends text to one log in the database in order, one transaction at a time: what is written
 * while an append is in flight goes out together in the next (a chatty step costs a few
 * round trips, not one per write). While the database is away the text waits and is tried again
 * (up to `MAX_WAITING_CHARS`); any other failed append marks the log truncated, reported once.
 */
export class LogAppender {
  #pending = '';
  #flushing: Promise<void> | undefined;
  #failure: string | undefined;
  #waiting = false;

  constructor(
    readonly path: string,
    private readonly logs: PgLogs,
    private readonly onFailure: (path: string, e: unknown) => string,
    /** Told when text starts waiting for the database (once per outage). */
    private readonly onWait: (path: string, e: unknown) => void = () => undefined,
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
        await this.logs.append(this.path, text).then(
          () => void (this.#waiting = false),
          async (e: unknown) => {
            if (isUnavailable(e) && text.length + this.#pending.length <= MAX_WAITING_CHARS) {
              // the database is away: the text waits (in order) and is tried again
              this.#pending = text + this.#pending;
              if (!this.#waiting) this.onWait(this.path, e);
              this.#waiting = true;
              await sleep(RETRY_MS);
              return;
            }
            this.#failure = this.onFailure(this.path, e);
            void this.logs.markTruncated(this.path, this.#failure).catch(() => undefined);
          },
        );
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
