import { describe, expect, it } from 'vitest';
import { addDays, dayOf, dayStartMs, daysToUnix } from './date-range';

describe('day ranges', () => {
  it('turns inclusive days into the first and last second, in the browser zone', () => {
    const { fromSec, toSec } = daysToUnix('2026-03-01', '2026-03-02');
    expect(fromSec).toBe(dayStartMs('2026-03-01') / 1000);
    expect(toSec).toBe(dayStartMs('2026-03-03') / 1000 - 1);
    expect(dayOf(dayStartMs('2026-03-02'))).toBe('2026-03-02');
  });

  it('leaves out a bound that is no day, and steps days across month ends', () => {
    expect(daysToUnix('', 'x')).toEqual({});
    expect(addDays('2026-02-28', 1)).toBe('2026-03-01');
    expect(addDays('2026-01-01', -1)).toBe('2025-12-31');
  });
});
