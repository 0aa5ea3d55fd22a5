import { describe, expect, it } from 'vitest';
import { formatTime, utcTime } from './time';

describe('times', () => {
  it('shows a time in a given zone with the zone, and the UTC value', () => {
    const iso = '2026-11-22T08:41:03.000Z';
    expect(formatTime(iso, 'UTC')).toBe('2026-11-22 08:41:03 UTC');
    expect(formatTime(iso, 'Asia/Tokyo')).toBe('2026-11-22 17:41:03 GMT+9');
    expect(formatTime('', 'UTC')).toBe('');
    expect(utcTime(iso)).toBe('2026-11-22T08:41:03Z UTC');
  });
});
