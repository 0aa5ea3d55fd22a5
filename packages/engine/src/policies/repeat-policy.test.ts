import { describe, expect, it } from 'vitest';
import type { RepeatPolicy } from '@trellis/spec';
import { repeatAllowed, repeatDelayMs, repeatHoldsByExit, repeatsWhen } from './repeat-policy.js';

const policy: RepeatPolicy = {
  mode: 'while',
  exitCode: [],
  limit: 0,
  intervalSec: 2,
  backoff: 2,
  maxIntervalSec: 5,
};

describe('repeat policy', () => {
  it('allows any number of executions with limit 0, else fewer than the limit', () => {
    expect(repeatAllowed(policy, 100)).toBe(true);
    expect(repeatAllowed({ ...policy, limit: 3 }, 2)).toBe(true);
    expect(repeatAllowed({ ...policy, limit: 3 }, 3)).toBe(false);
  });

  it('waits interval * backoff ^ doneCount, capped', () => {
    expect(repeatDelayMs(policy, 0)).toBe(2000);
    expect(repeatDelayMs(policy, 1)).toBe(4000);
    expect(repeatDelayMs(policy, 2)).toBe(5000);
  });

  it('holds by exit code when listed (a signal is -1), else by success', () => {
    expect(repeatHoldsByExit({ ...policy, exitCode: [1] }, { ok: false, exitCode: 1 })).toBe(true);
    expect(repeatHoldsByExit({ ...policy, exitCode: [-1] }, { ok: false, exitCode: null })).toBe(
      true,
    );
    expect(repeatHoldsByExit({ ...policy, exitCode: [1] }, { ok: true, exitCode: 0 })).toBe(false);
    expect(repeatHoldsByExit(policy, { ok: true, exitCode: 0 })).toBe(true);
    expect(repeatHoldsByExit(policy, { ok: false, exitCode: 2 })).toBe(false);
  });

  it('repeats while the condition holds, or until it holds', () => {
    expect(repeatsWhen(policy, true)).toBe(true);
    expect(repeatsWhen({ ...policy, mode: 'until' }, true)).toBe(false);
    expect(repeatsWhen({ ...policy, mode: 'until' }, false)).toBe(true);
  });
});
