import { Writable } from 'node:stream';
import { fd } from '../fs/fd.js';

/**
 * An append-only log file as a stream that never fails its writer: when a write fails (a full
 * disk, a deleted folder), `onFailure` hears of it once, later data is dropped, and the stream
 * stays writable, so a step process writing into it is never stalled or killed by its log. The
 * first failure stays in `failure`; the file's content is incomplete from there on.
 */
export class LogFile extends Writable {
  readonly path: string;
  readonly #onFailure: (path: string, e: unknown) => void;
  #fd: number | undefined;
  #failure: unknown;
  #written = 0;

  constructor(path: string, onFailure: (path: string, e: unknown) => void) {
    super({ decodeStrings: true });
    this.path = path;
    this.#onFailure = onFailure;
  }

  /** Bytes written to the file through this stream. */
  get written(): number {
    return this.#written;
  }

  /** The first write error, if any. */
  get failure(): unknown {
    return this.#failure;
  }

  override _construct(cb: (e?: Error | null) => void): void {
    fd.open(this.path, 'a').then(
      (f) => {
        this.#fd = f;
        cb();
      },
      (e: unknown) => {
        this.#fail(e);
        cb();
      },
    );
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.#append(chunk, cb);
  }

  override _writev(
    chunks: { chunk: Buffer; encoding: BufferEncoding }[],
    cb: (e?: Error | null) => void,
  ): void {
    this.#append(Buffer.concat(chunks.map((c) => c.chunk)), cb);
  }

  override _final(cb: (e?: Error | null) => void): void {
    this.#closeFd(cb);
  }

  override _destroy(e: Error | null, cb: (e?: Error | null) => void): void {
    this.#closeFd(() => cb(e));
  }

  #append(data: Buffer, cb: (e?: Error | null) => void): void {
    const f = this.#fd;
    if (f === undefined || this.#failure !== undefined) {
      cb(); // dropped: the log is already incomplete
      return;
    }
    fd.write(f, data).then(
      () => {
        this.#written += data.length;
        cb();
      },
      (e: unknown) => {
        this.#fail(e);
        cb();
      },
    );
  }

  #fail(e: unknown): void {
    if (this.#failure !== undefined) return;
    this.#failure = e;
    this.#onFailure(this.path, e);
  }

  #closeFd(cb: () => void): void {
    const f = this.#fd;
    this.#fd = undefined;
    if (f === undefined) {
      cb();
      return;
    }
    fd.close(f).then(cb, (e: unknown) => {
      this.#fail(e); // a close can report a delayed write error (NFS)
      cb();
    });
  }
}

/** Ends a log file and waits until its descriptor is closed. */
export const endLogFile = (f: LogFile): Promise<void> =>
  new Promise((resolve) => {
    if (f.closed || f.destroyed) {
      resolve();
      return;
    }
    f.once('close', () => resolve());
    f.end();
  });
