import type { Request, Response } from 'express';

/** Settings of the Server-Sent Events streams (docs/decisions.md, "Outbound events"). */
export interface SseOptions {
  /** A comment line this often keeps proxies from closing an idle stream. @default 15000 */
  readonly heartbeatMs?: number;
  /**
   * Bytes a connection may have waiting for a slow client; past it the connection is dropped
   * with a final `overflow` event (the client resumes with Last-Event-ID). @default 1 MiB
   */
  readonly maxBufferedBytes?: number;
}

export const DEFAULT_SSE_HEARTBEAT_MS = 15_000;
export const DEFAULT_SSE_MAX_BUFFERED_BYTES = 1024 * 1024;

/**
 * One Server-Sent Events response: events with ids, heartbeat comments, a bounded buffer. The
 * writes never wait for the client: a client that does not read fills its buffer and is dropped,
 * so a slow client never blocks the publisher or other clients.
 */
export class SseConnection {
  readonly #res: Response;
  readonly #max: number;
  readonly #timer: NodeJS.Timeout;
  readonly #onClose = new Set<() => void>();
  #closed = false;
  /** Above 0 inside {@link batch}: writes wait for its end. */
  #batching = 0;
  /** The id of the last event written, for the `overflow` event. */
  #lastId: number | string | undefined;

  constructor(req: Request, res: Response, opts: SseOptions = {}) {
    this.#res = res;
    this.#max = opts.maxBufferedBytes ?? DEFAULT_SSE_MAX_BUFFERED_BYTES;
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no'); // nginx: do not buffer the stream
    res.flushHeaders();
    req.socket.setNoDelay(true);
    req.socket.setKeepAlive(true);
    this.#timer = setInterval(
      () => this.#write(': heartbeat\n\n'),
      opts.heartbeatMs ?? DEFAULT_SSE_HEARTBEAT_MS,
    );
    this.#timer.unref();
    res.on('close', () => this.#end());
  }

  /** False once the stream is over (client gone, overflow, or `close`). */
  get open(): boolean {
    return !this.#closed;
  }

  /** Calls `f` once when the stream ends, whoever ends it. */
  onClose(f: () => void): void {
    if (this.#closed) f();
    else this.#onClose.add(f);
  }

  /**
   * Sends one event; when the client has too much waiting, sends `overflow` instead (naming
   * the last id it was sent) and ends.
   */
  send(event: string, data: unknown, id?: number | string): void {
    if (this.#closed) return;
    if (this.#res.writableLength > this.#max) {
      this.close('overflow', {
        message: `this client read too slowly (over ${this.#max} bytes waiting): reconnect with Last-Event-ID to resume`,
        ...(this.#lastId !== undefined ? { lastEventId: this.#lastId } : {}),
      });
      return;
    }
    if (id !== undefined) this.#lastId = id;
    this.#write(
      `${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`,
    );
  }

  /** Ends the stream, with a last event when given. */
  close(event?: string, data?: unknown): void {
    if (this.#closed) return;
    if (event !== undefined)
      this.#write(`event: ${event}\ndata: ${JSON.stringify(data ?? {})}\n\n`);
    this.#res.end();
    this.#end();
  }

  /**
   * Sends the events `f` sends as one write (a replay), instead of one write each.
   */
  batch(f: () => void): void {
    this.#batching += 1;
    try {
      f();
    } finally {
      this.#batching -= 1;
      this.#flush();
    }
  }

  #write(text: string): void {
    if (this.#closed) return;
    this.#res.write(text);
    if (this.#batching === 0) this.#flush();
  }

  /**
   * Puts what was written on the wire now. Node's HTTP response corks its socket at a write and
   * uncorks it on the next tick, and a write made inside a promise chain (a store save that
   * publishes) waits for that whole chain of microtasks first: a live event would reach the
   * client a millisecond or more late. Uncorking twice is harmless.
   */
  #flush(): void {
    const socket = this.#res.socket;
    if (socket && socket.writableCorked > 0) socket.uncork();
  }

  #end(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    for (const f of this.#onClose) f();
    this.#onClose.clear();
  }
}
