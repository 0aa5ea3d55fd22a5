import { describe, expect, it } from 'vitest';
import { nextAttemptAtMs, retryDelayMs } from './webhook-backoff.js';

const HOUR = 3_600_000;
const policy = { baseDelayMs: 1000, maxDelayMs: HOUR, retryForMs: 24 * HOUR };

describe('webhook retry back-off', () => {
  it('doubles from the base delay and stops growing at the cap', () => {
    const delays = [1, 2, 3, 4, 5].map((a) => retryDelayMs(a, policy));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000]);
    expect(retryDelayMs(13, policy)).toBe(HOUR);
    expect(retryDelayMs(10_000, policy)).toBe(HOUR);
  });

  it('spreads each delay by at most 10% either way', () => {
    expect(retryDelayMs(3, policy, 0)).toBe(3600);
    expect(retryDelayMs(3, policy, 0.999_999)).toBe(4400);
  });

  it('retries for the whole window, then gives up', () => {
    let now = 0;
    let attempts = 1;
    for (;;) {
      const next = nextAttemptAtMs(attempts, 0, now, policy);
      if (next === undefined) break;
      now = next;
      attempts++;
    }
    expect(now).toBeLessThanOrEqual(24 * HOUR);
    expect(now).toBeGreaterThan(23 * HOUR); // the last attempt comes within the last hour
    expect(attempts).toBe(35); // 12 growing delays, then one an hour
  });
});
