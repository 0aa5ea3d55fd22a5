import { describe, expect, it } from 'vitest';
import { DELIVERY_RETRY, failureKind, retryDelayMs } from './outbox-policy.js';

describe('outbox retry policy', () => {
  it('doubles the wait from 100 ms and caps it at 5 s', () => {
    const waits = [0, 1, 2, 3, 4, 5, 6, 10].map((a) => retryDelayMs(a, DELIVERY_RETRY, () => 0));
    expect(waits).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000]);
  });

  it('takes up to half of the wait off at random', () => {
    expect(retryDelayMs(10, DELIVERY_RETRY, () => 0.9)).toBe(2750);
    expect(retryDelayMs(0, DELIVERY_RETRY, () => 0.5)).toBe(75);
  });

  it('retries every failure but the coordinator refusing the message', () => {
    expect(failureKind(Object.assign(new Error('x'), { code: 3 }))).toBe('refused');
    for (const code of [1, 2, 4, 8, 13, 14, undefined])
      expect(failureKind(Object.assign(new Error('x'), { code }))).toBe('retry');
  });
});
