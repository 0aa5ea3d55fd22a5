import { Writable } from 'node:stream';

/**
 * Keeps at most `limit` bytes of stdout in memory (for `output`, `continueOn.output`, repeat
 * conditions). Past the limit it only remembers that the output was larger.
 */
export class OutputCapture {
  readonly #chunks: Buffer[] = [];
  #size = 0;
  #exceeded = false;

  constructor(readonly limit: number) {}

  add(chunk: Buffer): void {
    if (this.#exceeded) return;
    const room = this.limit - this.#size;
    if (chunk.length > room) {
      this.#exceeded = true;
      if (room > 0) this.#keep(Buffer.from(chunk.subarray(0, room)));
      return;
    }
    this.#keep(chunk);
  }

  get exceeded(): boolean {
    return this.#exceeded;
  }

  text(): string {
    return Buffer.concat(this.#chunks, this.#size).toString('utf8');
  }

  #keep(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#size += chunk.length;
  }
}

/**
 * A Writable that passes every chunk to each target and acknowledges it only when all of them
 * accepted it, so the slowest target throttles the producer (backpressure to the child's pipe).
 * A target that fails is dropped (reported through `onTargetError`) instead of stalling the rest.
 */
export class FanOutWritable extends Writable {
  readonly #targets: NodeJS.WritableStream[];

  constructor(
    targets: readonly NodeJS.WritableStream[],
    private readonly observe?: (chunk: Buffer) => void,
    private readonly onTargetError?: (target: NodeJS.WritableStream, err: Error) => void,
  ) {
    super();
    this.#targets = [...targets];
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.observe?.(chunk);
    let pending = 1;
    const settle = (): void => {
      if (--pending === 0) done();
    };
    for (const target of [...this.#targets]) {
      if (!target.writable) {
        // Failed or ended since the last chunk: waiting for its 'drain' would stall forever.
        const errored = (target as Partial<Writable>).errored;
        this.#drop(target, errored ?? new Error('the stream was closed'));
        continue;
      }
      try {
        if (target.write(chunk)) continue;
      } catch (e) {
        this.#drop(target, e as Error);
        continue;
      }
      pending++;
      void this.#drained(target).then(settle);
    }
    settle();
  }

  /** Resolves on 'drain', or when the target fails or closes (then it is dropped). */
  #drained(target: NodeJS.WritableStream): Promise<void> {
    return new Promise((resolve) => {
      const settle = (failure?: Error): void => {
        target.off('drain', onDrain);
        target.off('error', onError);
        target.off('close', onClose);
        if (failure) this.#drop(target, failure);
        resolve();
      };
      const onDrain = (): void => settle();
      const onError = (err: Error): void => settle(err);
      const onClose = (): void => settle(new Error('the stream was closed'));
      target.on('drain', onDrain);
      target.on('error', onError);
      target.on('close', onClose);
    });
  }

  #drop(target: NodeJS.WritableStream, err: Error): void {
    const i = this.#targets.indexOf(target);
    if (i === -1) return;
    this.#targets.splice(i, 1);
    this.onTargetError?.(target, err);
  }
}
