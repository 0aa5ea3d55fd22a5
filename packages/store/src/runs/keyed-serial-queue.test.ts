import { describe, expect, it } from 'vitest';
import { KeyedSerialQueue } from './keyed-serial-queue.js';

const deferred = (): { promise: Promise<void>; resolve: () => void } => {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

describe('KeyedSerialQueue', () => {
  it('runs the tasks of one key in call order, one at a time', async () => {
    const q = new KeyedSerialQueue();
    const gate = deferred();
    const order: string[] = [];
    const a = q.run('k', async () => {
      await gate.promise;
      order.push('a');
    });
    const b = q.run('k', () => Promise.resolve(order.push('b')));
    gate.resolve();
    await Promise.all([a, b]);
    expect(order).toEqual(['a', 'b']);
  });

  it('does not make one key wait for another', async () => {
    const q = new KeyedSerialQueue();
    const gate = deferred();
    const slow = q.run('a', () => gate.promise);
    await expect(q.run('b', () => Promise.resolve(1))).resolves.toBe(1);
    gate.resolve();
    await slow;
  });

  it('keeps running later tasks after one fails, and forgets idle keys', async () => {
    const q = new KeyedSerialQueue();
    const failed = q.run('k', () => Promise.reject(new Error('boom')));
    const next = q.run('k', () => Promise.resolve('ok'));
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ok');
    await new Promise((r) => setImmediate(r));
    expect(q.activeKeys).toBe(0);
  });
});
