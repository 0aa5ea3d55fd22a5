import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF, nextPollDelay } from './backoff';

describe('nextPollDelay', () => {
  it('polls fast while active, slower while idle', () => {
    expect(nextPollDelay(DEFAULT_BACKOFF, { active: true, failures: 0 })).toBe(1000);
    expect(nextPollDelay(DEFAULT_BACKOFF, { active: false, failures: 0 })).toBe(5000);
  });
  it('doubles per consecutive failure up to the maximum', () => {
    expect(nextPollDelay(DEFAULT_BACKOFF, { active: true, failures: 1 })).toBe(2000);
    expect(nextPollDelay(DEFAULT_BACKOFF, { active: true, failures: 3 })).toBe(8000);
    expect(nextPollDelay(DEFAULT_BACKOFF, { active: true, failures: 50 })).toBe(30_000);
  });
});
