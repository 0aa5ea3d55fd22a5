import { describe, expect, it } from 'vitest';
import { healthOf } from './worker-health.js';

const T0 = new Date('2026-01-02T03:04:05Z');
const after = (ms: number): Date => new Date(T0.getTime() + ms);

describe('worker health', () => {
  it('is healthy under 5 s', () => {
    expect(healthOf(T0, after(0))).toBe('healthy');
    expect(healthOf(T0, after(4_999))).toBe('healthy');
  });

  it('is warning from 5 s to 15 s', () => {
    expect(healthOf(T0, after(5_000))).toBe('warning');
    expect(healthOf(T0, after(15_000))).toBe('warning');
  });

  it('is unhealthy over 15 s', () => {
    expect(healthOf(T0, after(15_001))).toBe('unhealthy');
  });

  it('counts a heartbeat from the future as fresh', () => {
    expect(healthOf(after(2_000), T0)).toBe('healthy');
  });
});
