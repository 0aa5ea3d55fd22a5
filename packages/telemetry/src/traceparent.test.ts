import { describe, expect, it } from 'vitest';
import { formatTraceparent, parseTraceparent } from './traceparent.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('traceparent', () => {
  it('parses a version 00 context and formats it back', () => {
    const p = parseTraceparent(`00-${TRACE}-${SPAN}-01`);
    expect(p).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true });
    expect(formatTraceparent(p!)).toBe(`00-${TRACE}-${SPAN}-01`);
    expect(parseTraceparent(` 00-${TRACE.toUpperCase()}-${SPAN}-00 `)?.sampled).toBe(false);
  });

  it.each([
    ['', 'empty'],
    [`ff-${TRACE}-${SPAN}-01`, 'version ff'],
    [`00-${'0'.repeat(32)}-${SPAN}-01`, 'zero trace id'],
    [`00-${TRACE}-${'0'.repeat(16)}-01`, 'zero span id'],
    [`00-${TRACE}-${SPAN}-01-extra`, 'version 00 with a suffix'],
    [`00-${TRACE.slice(1)}-${SPAN}-01`, 'short trace id'],
  ])('rejects %j (%s)', (text) => {
    expect(parseTraceparent(text)).toBeUndefined();
  });

  it('accepts a later version with extra fields', () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-future`)?.traceId).toBe(TRACE);
  });
});
