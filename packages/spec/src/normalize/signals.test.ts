import { describe, expect, it } from 'vitest';
import { normalizeSignal } from './signals.js';

describe('normalizeSignal', () => {
  it('keeps a full signal name', () => {
    expect(normalizeSignal('SIGTERM')).toBe('SIGTERM');
    expect(normalizeSignal('SIGKILL')).toBe('SIGKILL');
  });

  it('adds the SIG prefix and upper-cases, ignoring surrounding spaces', () => {
    expect(normalizeSignal('int')).toBe('SIGINT');
    expect(normalizeSignal('sighup')).toBe('SIGHUP');
    expect(normalizeSignal('  USR1 ')).toBe('SIGUSR1');
  });

  it('returns undefined for unknown names, numbers and empty text', () => {
    expect(normalizeSignal('SIGSTOPNOW')).toBeUndefined();
    expect(normalizeSignal('9')).toBeUndefined();
    expect(normalizeSignal('')).toBeUndefined();
    expect(normalizeSignal('SIG')).toBeUndefined();
  });
});
