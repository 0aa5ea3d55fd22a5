import { describe, expect, it } from 'vitest';
import { resolveLogWindow } from './log-window.js';

describe('resolveLogWindow', () => {
  it('reads lines 1..1000 when nothing is set', () => {
    expect(resolveLogWindow({})).toEqual({ kind: 'range', first: 1, count: 1000 });
  });

  it('lets tail win over head, offset and limit', () => {
    expect(resolveLogWindow({ tail: 3, head: 2, offset: 5, limit: 7 })).toEqual({
      kind: 'tail',
      count: 3,
    });
  });

  it('lets head win over offset and limit', () => {
    expect(resolveLogWindow({ head: 2, offset: 10, limit: 7 })).toEqual({
      kind: 'range',
      first: 1,
      count: 2,
    });
  });

  it('reads limit lines from offset, 1000 when limit is not set', () => {
    expect(resolveLogWindow({ offset: 10, limit: 5 })).toEqual({
      kind: 'range',
      first: 10,
      count: 5,
    });
    expect(resolveLogWindow({ offset: 10 })).toEqual({ kind: 'range', first: 10, count: 1000 });
  });

  it('reads limit lines from line 1 when only limit is set', () => {
    expect(resolveLogWindow({ limit: 5 })).toEqual({ kind: 'range', first: 1, count: 5 });
  });

  it('treats 0 as not set', () => {
    expect(resolveLogWindow({ tail: 0, head: 0, offset: 0, limit: 0 })).toEqual({
      kind: 'range',
      first: 1,
      count: 1000,
    });
  });

  it('refuses negative and fractional values and counts over 10000, naming the parameter', () => {
    expect(() => resolveLogWindow({ tail: -1 })).toThrow(/invalid tail -1/);
    expect(() => resolveLogWindow({ offset: 1.5 })).toThrow(/invalid offset 1.5/);
    expect(() => resolveLogWindow({ limit: 10_001 })).toThrow(/at most 10000/);
    expect(() => resolveLogWindow({ head: 10_001 })).toThrow(/invalid head/);
  });
});
