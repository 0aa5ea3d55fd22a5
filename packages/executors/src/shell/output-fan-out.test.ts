import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { FanOutWritable, OutputCapture } from './output-fan-out.js';

/** A target that holds each chunk until `release()` is called. */
class HeldSink extends Writable {
  readonly chunks: string[] = [];
  #pending: (() => void)[] = [];
  constructor() {
    super({ highWaterMark: 1 });
  }
  override _write(chunk: Buffer, _e: BufferEncoding, done: () => void): void {
    this.chunks.push(chunk.toString());
    this.#pending.push(done);
  }
  release(): void {
    for (const done of this.#pending.splice(0)) done();
  }
}

const collector = () => {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { sink, chunks };
};

describe('output capture', () => {
  it('keeps output up to the limit', () => {
    const c = new OutputCapture(10);
    c.add(Buffer.from('hello '));
    c.add(Buffer.from('you'));
    expect([c.text(), c.exceeded]).toEqual(['hello you', false]);
  });

  it('stops at the limit and reports that the output was larger', () => {
    const c = new OutputCapture(8);
    c.add(Buffer.from('hello '));
    c.add(Buffer.from('world'));
    c.add(Buffer.from('more'));
    expect([c.text(), c.exceeded]).toEqual(['hello wo', true]);
  });
});

describe('output fan-out', () => {
  it('passes every chunk to every target and to the observer', async () => {
    const a = collector();
    const b = collector();
    const seen: string[] = [];
    const fan = new FanOutWritable([a.sink, b.sink], (c) => seen.push(c.toString()));
    fan.write('x');
    fan.end('y');
    await finished(fan);
    expect([a.chunks, b.chunks, seen]).toEqual([
      ['x', 'y'],
      ['x', 'y'],
      ['x', 'y'],
    ]);
  });

  it('acknowledges a chunk only when the slowest target drained', async () => {
    const slow = new HeldSink();
    const fast = collector();
    const fan = new FanOutWritable([fast.sink, slow], undefined);
    let acked = false;
    fan.write('x', () => (acked = true));
    await new Promise((r) => setImmediate(r));
    expect(acked).toBe(false);
    slow.release();
    await new Promise((r) => setImmediate(r));
    expect(acked).toBe(true);
  });

  it('drops a target that fails and keeps feeding the others', async () => {
    const slow = new HeldSink();
    const ok = collector();
    const dropped: string[] = [];
    const fan = new FanOutWritable([slow, ok.sink], undefined, (_t, err) =>
      dropped.push(err.message),
    );
    slow.on('error', () => undefined);
    fan.write('a');
    slow.destroy(new Error('disk full'));
    fan.end('b');
    await finished(fan);
    expect(ok.chunks).toEqual(['a', 'b']);
    expect(dropped).toEqual(['disk full']);
  });
});
